// What the backup tool prints may hold a credential: pgBackRest echoes the S3 server's error body,
// which names the access key id (and, from some servers, the string that was signed). Nothing it
// prints reaches a log, an Event or status before going through here.
import { credentialValues, type S3Credentials } from './destination.ts';

const redacted = '<redacted>';

/** `text` with every credential value replaced, and every XML error body cut down to its code. */
export function redactToolOutput(text: string, credentials: S3Credentials): string {
  let out = text;
  // Longest first, so a value that contains another is replaced whole.
  for (const value of credentialValues(credentials).sort((a, b) => b.length - a.length)) {
    out = out.split(value).join(redacted);
  }
  // An S3 error body carries signatures, canonical requests and key ids: keep only its code and message.
  out = out.replace(/<\?xml[\s\S]*?<\/Error>/g, (body) => {
    const code = /<Code>([^<]*)<\/Code>/.exec(body)?.[1] ?? 'unknown';
    const message = /<Message>([^<]*)<\/Message>/.exec(body)?.[1] ?? '';
    return `S3 error ${code}${message ? `: ${message}` : ''}`;
  });
  return out;
}

/**
 * The lines of the tool's output that say why it failed (pgBackRest's `ERROR: [code]: ...`, with
 * the S3 status and code it quotes), redacted: short enough for a condition message.
 */
export function toolFailureSummary(output: string, credentials: S3Credentials): string {
  const clean = redactToolOutput(output, credentials);
  const lines = clean.split('\n').map((l) => l.trim());
  // pgBackRest's reasons read "ERROR: [041]: ...", after a timestamp when it logs to the console.
  const errors = lines.filter((l) => /\b(ERROR|WARN): \[\d+\]/.test(l));
  const s3 = lines.filter((l) => l.startsWith('S3 error ') || /^HTTP request failed/.test(l));
  const status = clean.match(/request failed with (\d{3} \([^)]*\))/)?.[1];
  const picked = [...new Set([...errors, ...s3, ...(status ? [`HTTP ${status}`] : [])])];
  return (picked.length > 0 ? picked : lines.filter((l) => l.length > 0).slice(-3)).join('; ');
}
