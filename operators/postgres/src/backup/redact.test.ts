import { describe, expect, it } from 'vitest';
import { redactToolOutput, toolFailureSummary } from './redact.ts';

const credentials = {
  accessKeyId: 'AKTEST123',
  secretAccessKey: 'topsecretvalue',
  sessionToken: 'sessiontok',
};

// The shape pgBackRest 2.45 printed for a wrong secret key against versitygw (values replaced).
const output = `2026-11-26 22:01:02.977 P00  ERROR: [103]: unable to find a valid repository:
       repo1: [ProtocolError] HTTP request failed with 403 (Forbidden):
       *** Response Content ***:
       <?xml version="1.0" encoding="UTF-8"?>
<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message><AWSAccessKeyId>AKTEST123</AWSAccessKeyId><SignatureProvided>db12</SignatureProvided></Error>
      HINT: is archive_command configured correctly in postgresql.conf?
key topsecretvalue token sessiontok`;

describe('redacting the tool output', () => {
  it('removes every credential value and cuts S3 error bodies to code and message', () => {
    const clean = redactToolOutput(output, credentials);
    expect(clean).not.toContain('AKTEST123');
    expect(clean).not.toContain('topsecretvalue');
    expect(clean).not.toContain('sessiontok');
    expect(clean).not.toContain('SignatureProvided');
    expect(clean).toContain(
      'S3 error SignatureDoesNotMatch: The request signature we calculated does not match',
    );
  });

  it('summarises a failure by its error line, S3 code and HTTP status', () => {
    expect(toolFailureSummary(output, credentials)).toBe(
      '2026-11-26 22:01:02.977 P00  ERROR: [103]: unable to find a valid repository:; S3 error SignatureDoesNotMatch: The request signature we calculated does not match; HTTP 403 (Forbidden)',
    );
  });
});
