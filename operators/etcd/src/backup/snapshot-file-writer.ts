// Writes a snapshot file and computes its sha256 on a thread of its own, so the main thread only
// receives the stream (ADR 0304). On two cores shared with etcd, the main thread hashing while the
// thread pool wrote kept the snapshot at 0.7-0.9x etcdctl's speed; the sha256 alone on a worker,
// with the writes still in the thread pool, was slower (three busy threads on two cores). One
// writer thread that writes and hashes each batch reached etcdctl's speed (bench:snapshot). The
// main thread copies the bytes into 1 MiB batches of its own (the frames' memory is Node's to
// reuse) and hands each over without a further copy.
import { Worker } from 'node:worker_threads';

// Evaluated, not loaded from a file: the operator image runs one bundled file, with no worker
// script beside it to find. It keeps the last 32 bytes out of the hash until the next batch
// shows they were not the end: etcd's trailer is the sha256 of everything before it.
const writerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { createHash } = require('node:crypto');
const { fd, syncEveryBytes } = workerData;
const trailerBytes = 32;
const hash = createHash('sha256');
let tail = Buffer.alloc(0);
let size = 0;
let unsynced = 0;
let syncing = false;
const reply = (message) => parentPort.postMessage(message);
parentPort.on('message', (message) => {
  try {
    if (message.type === 'write') {
      const data = Buffer.from(message.data, 0, message.length);
      for (let at = 0; at < data.length; ) at += fs.writeSync(fd, data, at, data.length - at);
      size += data.length;
      const joined = tail.length + data.length;
      const cut = Math.max(0, joined - trailerBytes);
      if (cut >= tail.length) {
        hash.update(tail);
        hash.update(data.subarray(0, cut - tail.length));
        tail = Buffer.from(data.subarray(cut - tail.length));
      } else {
        const both = Buffer.concat([tail, data]);
        hash.update(both.subarray(0, cut));
        tail = both.subarray(cut);
      }
      // A datasync in the thread pool every so often, beside the next writes: the fsync before
      // commit then has only the last few MiB left.
      unsynced += data.length;
      if (unsynced >= syncEveryBytes && !syncing) {
        unsynced = 0;
        syncing = true;
        fs.fdatasync(fd, () => (syncing = false));
      }
      reply({ type: 'written', bytes: data.length });
    } else if (message.type === 'sync') {
      fs.fsyncSync(fd);
      reply({ type: 'synced' });
    } else if (message.type === 'digest') {
      reply({ type: 'digest', size, sha256: hash.digest('hex'), trailer: tail.toString('hex') });
    }
  } catch (error) {
    reply({ type: 'failed', message: String((error && error.message) || error) });
  }
});
`;

const batchBytes = 1024 * 1024;
// Bytes handed over but not yet written: past this, `write` asks the stream to wait. It bounds
// memory and passes a slow disk's backpressure on to etcd.
const maxInFlightBytes = 8 * 1024 * 1024;
const syncEveryBytes = 32 * 1024 * 1024;

/** What the writer thread hashed: every byte but the last 32, and those 32 (etcd's trailer). */
export interface WrittenDigest {
  readonly sizeBytes: number;
  readonly sha256: string;
  readonly trailer: string;
}

type Reply =
  | { type: 'written'; bytes: number }
  | { type: 'synced' }
  | { type: 'digest'; size: number; sha256: string; trailer: string }
  | { type: 'failed'; message: string };

interface Pending<T> {
  resolve: (value: T) => void;
  reject: (error: Error) => void;
}

/** One file written, hashed and synced by a writer thread; `close` ends the thread. */
export class SnapshotFileWriter {
  readonly #worker: Worker;
  readonly #path: string;
  #batch = Buffer.allocUnsafeSlow(batchBytes);
  #filled = 0;
  #inFlightBytes = 0;
  #failure: Error | undefined;
  #roomWaiters: Pending<void>[] = [];
  #drainWaiters: Pending<void>[] = [];
  // Answers to 'sync' and 'digest' come in the order they were asked.
  #answers: Pending<Reply>[] = [];
  #closed = false;

  /** Writes to the open file `fd` (the caller opens and closes it); `path` names it in errors. */
  constructor(fd: number, path: string) {
    this.#path = path;
    this.#worker = new Worker(writerSource, { eval: true, workerData: { fd, syncEveryBytes } });
    this.#worker.on('message', (reply: Reply) => this.#receive(reply));
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', (code) => {
      if (!this.#closed) this.#fail(new Error(`the writer thread exited with code ${code}`));
    });
  }

  /** Copies `chunk` into the current batch; a promise means "wait, the disk is behind". */
  write(chunk: Uint8Array): Promise<void> | undefined {
    this.#throwIfFailed();
    let at = 0;
    while (at < chunk.length) {
      const n = Math.min(chunk.length - at, batchBytes - this.#filled);
      this.#batch.set(n === chunk.length ? chunk : chunk.subarray(at, at + n), this.#filled);
      this.#filled += n;
      at += n;
      if (this.#filled === batchBytes) this.#post();
    }
    if (this.#inFlightBytes < maxInFlightBytes) return undefined;
    return new Promise((resolve, reject) => this.#roomWaiters.push({ resolve, reject }));
  }

  /** Resolves once every byte written so far is in the file (readable by others). */
  async drain(): Promise<void> {
    this.#post();
    this.#throwIfFailed();
    if (this.#inFlightBytes === 0) return;
    await new Promise<void>((resolve, reject) => this.#drainWaiters.push({ resolve, reject }));
  }

  /** fsync of every byte written so far. */
  async sync(): Promise<void> {
    this.#post();
    await this.#ask('sync');
  }

  /** The sha256 of every byte written so far but the last 32, and those 32. */
  async digest(): Promise<WrittenDigest> {
    this.#post();
    const reply = await this.#ask('digest');
    if (reply.type !== 'digest') throw new Error(`${this.#path}: the writer thread answered ${reply.type}`);
    return { sizeBytes: reply.size, sha256: reply.sha256, trailer: reply.trailer };
  }

  /** Ends the thread once what it was given is written (or at once when it failed). */
  async close(): Promise<void> {
    if (this.#closed) return;
    if (!this.#failure) await this.drain().catch(() => undefined);
    this.#closed = true;
    await this.#worker.terminate();
  }

  #ask(type: 'sync' | 'digest'): Promise<Reply> {
    this.#throwIfFailed();
    const answer = new Promise<Reply>((resolve, reject) => this.#answers.push({ resolve, reject }));
    this.#worker.postMessage({ type });
    return answer;
  }

  #post(): void {
    if (this.#filled === 0 || this.#failure) return;
    const data = this.#batch;
    const length = this.#filled;
    this.#batch = Buffer.allocUnsafeSlow(batchBytes);
    this.#filled = 0;
    this.#inFlightBytes += length;
    // Memory of its own (allocUnsafeSlow, never Node's shared pool): handed over, not copied.
    this.#worker.postMessage({ type: 'write', data: data.buffer, length }, [data.buffer]);
  }

  #receive(reply: Reply): void {
    if (reply.type === 'written') {
      this.#inFlightBytes -= reply.bytes;
      if (this.#inFlightBytes < maxInFlightBytes) this.#settle('room', undefined);
      if (this.#inFlightBytes === 0) this.#settle('drain', undefined);
    } else if (reply.type === 'failed') {
      this.#fail(new Error(reply.message));
    } else {
      this.#answers.shift()?.resolve(reply);
    }
  }

  #settle(which: 'room' | 'drain', error: Error | undefined): void {
    const waiters = which === 'room' ? this.#roomWaiters : this.#drainWaiters;
    if (which === 'room') this.#roomWaiters = [];
    else this.#drainWaiters = [];
    for (const waiter of waiters) {
      if (error) waiter.reject(error);
      else waiter.resolve();
    }
  }

  #fail(cause: unknown): void {
    if (this.#failure) return;
    this.#failure = new Error(`write ${this.#path}`, { cause });
    this.#settle('room', this.#failure);
    this.#settle('drain', this.#failure);
    const answers = this.#answers;
    this.#answers = [];
    for (const answer of answers) answer.reject(this.#failure);
  }

  #throwIfFailed(): void {
    if (this.#failure) throw this.#failure;
  }
}
