// sha256 on a worker thread. Hashing a snapshot costs about as much CPU as receiving it (0.2-0.7 s
// for 290 MB on the development machine); on the receiving thread the two add up, on a worker
// they overlap. Bytes are copied into 1 MiB batches whose memory is handed to the worker, so the
// caller may reuse or keep its chunks, and a few hundred messages cross, not one per chunk.
import { Worker } from 'node:worker_threads';

const batchBytes = 1024 * 1024;

// Inline, so the operator's single-file bundle needs no worker file next to it. CommonJS: an
// eval'd worker is a script.
const workerSource = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hash = createHash('sha256');
parentPort.on('message', (bytes) => {
  if (bytes === null) parentPort.postMessage(hash.digest('hex'));
  else hash.update(bytes);
});
`;

/** Something that takes bytes in order and gives their sha256 at the end. */
export interface Sha256Input {
  update(bytes: Uint8Array): void;
  /** Hex sha256 of everything given; for a background hash, only once `settle()` has resolved. */
  digest(): string;
}

/** A sha256 computed on a worker thread; call `settle()` once all bytes are in, then `digest()`. */
export class BackgroundSha256 implements Sha256Input {
  readonly #worker = new Worker(workerSource, { eval: true });
  #batch = new Uint8Array(batchBytes);
  #filled = 0;
  #digest: string | undefined;

  update(bytes: Uint8Array): void {
    let offset = 0;
    while (offset < bytes.length) {
      const take = Math.min(bytes.length - offset, batchBytes - this.#filled);
      this.#batch.set(bytes.subarray(offset, offset + take), this.#filled);
      this.#filled += take;
      offset += take;
      if (this.#filled === batchBytes) this.#send();
    }
  }

  /** Sends what is left, waits for the worker's digest and ends the worker. */
  async settle(): Promise<void> {
    this.#send();
    const digest = new Promise<string>((resolve, reject) => {
      this.#worker.once('message', (hex: string) => resolve(hex));
      this.#worker.once('error', reject);
      this.#worker.once('exit', (code) =>
        reject(new Error(`sha256 worker exited (${code}) before its digest`)),
      );
    });
    this.#worker.postMessage(null);
    try {
      this.#digest = await digest;
    } finally {
      await this.#worker.terminate();
    }
  }

  digest(): string {
    if (this.#digest === undefined) throw new Error('BackgroundSha256.digest() before settle()');
    return this.#digest;
  }

  /** Ends the worker without a digest (a stream that failed). */
  async dispose(): Promise<void> {
    await this.#worker.terminate();
  }

  #send(): void {
    if (this.#filled === 0) return;
    const batch = this.#filled === batchBytes ? this.#batch : this.#batch.slice(0, this.#filled);
    this.#worker.postMessage(batch, [batch.buffer]);
    this.#batch = new Uint8Array(batchBytes);
    this.#filled = 0;
  }
}
