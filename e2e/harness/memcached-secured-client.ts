// A client of a Memcached run with spec.tls and spec.sasl, from inside the cluster: a pod running
// the operator image (it has node) speaks TLS, trusting only the given CA, and the binary protocol
// with SASL PLAIN, reading the credentials from the SASL Secret mounted into it (never from its
// spec). It reports what memcached answered: to the right password, to a wrong one, and to
// plaintext on the same port.
import { randomBytes } from 'node:crypto';
import { operatorImages } from '../images/image-names.ts';
import { memcacheUid } from './memcached-client.ts';
import { runClientPod, type ClientPodResult } from './workloads.ts';

const credentialsDir = '/sasl';

// CommonJS for `node -e`. Prints `auth: <status>`, `version: <answer>`, `wrong-auth: <status>`
// and `plain: <answer or none>`; binary-protocol status 0 is success, 32 (0x20) an auth error.
export const securedClientScript = String.raw`
const tls = require('node:tls');
const net = require('node:net');
const fs = require('node:fs');
const host = process.env.HOST;
const port = Number(process.env.PORT);
const ca = process.env.CA;
const dir = process.env.CREDENTIALS_DIR;
const user = fs.readFileSync(dir + '/username', 'utf8').replace(/\n+$/, '');
const password = fs.readFileSync(dir + '/password', 'utf8').replace(/\n$/, '');
function request(opcode, key, value) {
  const k = Buffer.from(key), v = Buffer.from(value), header = Buffer.alloc(24);
  header[0] = 0x80; header[1] = opcode;
  header.writeUInt16BE(k.length, 2); header.writeUInt32BE(k.length + v.length, 8);
  return Buffer.concat([header, k, v]);
}
function session(pass, onAnswer) {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host, port, ca }, () => socket.write(request(0x21, 'PLAIN', '\0' + user + '\0' + pass)));
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 24 && buffered.length >= 24 + buffered.readUInt32BE(8)) {
        const length = 24 + buffered.readUInt32BE(8);
        const answer = { opcode: buffered[1], status: buffered.readUInt16BE(6), value: buffered.subarray(24 + buffered.readUInt16BE(2) + buffered[4], length).toString() };
        buffered = buffered.subarray(length);
        if (onAnswer(answer, socket)) { socket.end(); resolve(); }
      }
    });
    socket.on('error', reject);
    socket.setTimeout(10000, () => { socket.destroy(); reject(new Error('no answer in 10 s')); });
  });
}
function plain() {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port }, () => socket.write('version\r\n'));
    let answer = '';
    socket.on('data', (d) => (answer += d));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answer));
    socket.setTimeout(3000, () => socket.destroy());
  });
}
(async () => {
  await session(password, (answer, socket) => {
    if (answer.opcode === 0x21) {
      console.log('auth: ' + answer.status);
      if (answer.status !== 0) return true;
      socket.write(request(0x0b, '', ''));
      return false;
    }
    console.log('version: ' + answer.value);
    return true;
  });
  await session(password + '-wrong', (answer) => (console.log('wrong-auth: ' + answer.status), true));
  console.log('plain: ' + (JSON.stringify((await plain()).trim()).slice(1, -1) || 'none'));
})().catch((error) => { console.log('error: ' + error.message); process.exitCode = 1; });
`;

/** One secured session against `host:port` from a client pod in `namespace`. */
export async function memcachedSecuredSession(options: {
  namespace: string;
  host: string;
  port?: number;
  /** The CA (PEM) the client trusts. */
  ca: string;
  /** The Secret with username and password (spec.sasl's). */
  saslSecret: string;
}): Promise<ClientPodResult & { lines: string[] }> {
  const result = await runClientPod({
    namespace: options.namespace,
    name: `secured-${randomBytes(3).toString('hex')}`,
    image: operatorImages.memcached,
    command: ['node', '-e', securedClientScript],
    env: [
      { name: 'CREDENTIALS_DIR', value: credentialsDir },
      { name: 'HOST', value: options.host },
      { name: 'PORT', value: String(options.port ?? 11211) },
      { name: 'CA', value: options.ca },
    ],
    runAsUser: memcacheUid,
    secret: { name: options.saslSecret, mountPath: credentialsDir },
    memoryLimit: '128Mi',
  });
  return { ...result, lines: result.logs.trim().split('\n') };
}
