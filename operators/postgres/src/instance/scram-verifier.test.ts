import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { scramVerifier } from './scram-verifier.ts';

describe('scramVerifier', () => {
  it("matches RFC 7677's exchange: its client proof and server signature check against the keys", () => {
    // RFC 7677, section 3: user "user", password "pencil", salt W22ZaJ0SNY7soEsUEjb6gQ==, 4096
    // iterations. A server holding only the verifier checks the client proof with StoredKey and
    // signs with ServerKey; both must reproduce the RFC's messages.
    const verifier = scramVerifier('pencil', Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'));
    const match = /^SCRAM-SHA-256\$4096:W22ZaJ0SNY7soEsUEjb6gQ==\$([^:]+):(.+)$/.exec(verifier);
    expect(match).not.toBeNull();
    const storedKey = Buffer.from(match?.[1] ?? '', 'base64');
    const serverKey = Buffer.from(match?.[2] ?? '', 'base64');
    const nonce = 'rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0';
    const authMessage = `n=user,r=rOprNGfwEbeRWgbNEkqO,r=${nonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=${nonce}`;
    const hmac = (key: Buffer) => createHmac('sha256', key).update(authMessage).digest();
    expect(hmac(serverKey).toString('base64')).toBe('6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
    const proof = Buffer.from('dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=', 'base64');
    const signature = hmac(storedKey);
    const clientKey = Buffer.from(proof.map((byte, i) => byte ^ (signature[i] ?? 0)));
    expect(createHash('sha256').update(clientKey).digest().equals(storedKey)).toBe(true);
  });

  it('salts each verifier afresh and never contains the password', () => {
    const a = scramVerifier('same-password');
    const b = scramVerifier('same-password');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^SCRAM-SHA-256\$4096:[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$/);
    expect(a).not.toContain('same-password');
  });

  it('refuses an empty or non-ASCII password without naming it', () => {
    expect(() => scramVerifier('')).toThrow(/non-empty printable ASCII/);
    expect(() => scramVerifier('pässwörd')).toThrow(/^a password must be non-empty printable ASCII/);
    expect(() => scramVerifier('line\nbreak')).toThrow(/printable ASCII/);
  });
});
