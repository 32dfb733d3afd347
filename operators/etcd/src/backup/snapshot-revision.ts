// The revision a snapshot holds, read from its bbolt file in a handful of page reads. etcd keeps
// every revision of every key in the `key` bucket, keyed by the revision itself (8 bytes main
// revision, big-endian, `_`, 8 bytes sub revision, and a `t` for a delete), so the last key of that
// bucket is the snapshot's revision. `etcdutl snapshot status` finds the same key by walking every
// key of every bucket (with a full integrity check and a crc32 over it all): hundreds of ms at a
// few hundred MB. Here only the path to the bucket's rightmost leaf is read.
//
// bbolt's file format (go.etcd.io/bbolt, unchanged since its version 2 meta): pages of `pageSize`
// bytes, each starting with a 16-byte header (id u64, flags u16, count u16, overflow u32); pages 0
// and 1 are metas (the valid one with the higher txid wins); a bucket is a B+tree of branch pages
// (elements: pos u32, ksize u32, pgid u64) and leaf pages (elements: flags u32, pos u32, ksize u32,
// vsize u32), with `pos` counted from the element itself; a bucket value is its root pgid and
// sequence (u64 each), followed by the bucket's page when it is small enough to be inline (root 0).
// Integers are in the byte order of the machine that wrote the file: little-endian on every
// platform etcd releases for.
import { open, type FileHandle } from 'node:fs/promises';

const magic = 0xed0cdaed;
const formatVersion = 2;
const pageHeaderBytes = 16;
const elementBytes = 16;
const metaBytes = 64;
const checksumOffset = 56;
const branchFlag = 0x01;
const leafFlag = 0x02;
const bucketLeafFlag = 0x01;
const bucketHeaderBytes = 16;
const revisionKeyBytes = 17;
const keyBucket = Buffer.from('key');

/** A page's bytes (all of its overflow pages included) and what its header says. */
interface Page {
  readonly bytes: Buffer;
  readonly flags: number;
  readonly count: number;
}

function fnv1a64(bytes: Buffer): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const byte of bytes) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return hash;
}

function pageAt(bytes: Buffer): Page {
  return { bytes, flags: bytes.readUInt16LE(8), count: bytes.readUInt16LE(10) };
}

/** The reader of one file: pages by id, each checked to be the page it claims to be. */
class BboltFile {
  readonly #file: FileHandle;
  readonly #path: string;
  #pageSize = 4096;

  constructor(file: FileHandle, path: string) {
    this.#file = file;
    this.#path = path;
  }

  fail(message: string): Error {
    return new Error(`${this.#path}: ${message}; not a bbolt database, or a corrupt one`);
  }

  async #read(offset: number, length: number): Promise<Buffer> {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await this.#file.read(buffer, 0, length, offset);
    if (bytesRead < length) throw this.fail(`${length} bytes at offset ${offset} run past the end`);
    return buffer;
  }

  /** The root page id of the database's root bucket, from the newer valid meta page. */
  async rootBucketPage(): Promise<bigint> {
    const first = await this.#read(0, pageHeaderBytes + metaBytes);
    this.#pageSize = first.readUInt32LE(pageHeaderBytes + 8);
    if (this.#pageSize < 512 || this.#pageSize > 1 << 20)
      throw this.fail(`page size ${this.#pageSize} in meta page 0`);
    const metas = [first, await this.#read(this.#pageSize, pageHeaderBytes + metaBytes)]
      .map((page) => page.subarray(pageHeaderBytes))
      .filter(
        (meta) =>
          meta.readUInt32LE(0) === magic &&
          meta.readUInt32LE(4) === formatVersion &&
          meta.readBigUInt64LE(checksumOffset) === fnv1a64(meta.subarray(0, checksumOffset)),
      )
      .sort((a, b) => (a.readBigUInt64LE(48) > b.readBigUInt64LE(48) ? -1 : 1));
    const meta = metas[0];
    if (!meta) throw this.fail('neither meta page has bbolt version 2 magic and checksum');
    return meta.readBigUInt64LE(16);
  }

  async page(id: bigint): Promise<Page> {
    const offset = Number(id) * this.#pageSize;
    const header = await this.#read(offset, pageHeaderBytes);
    if (header.readBigUInt64LE(0) !== id)
      throw this.fail(`page ${id} says it is page ${header.readBigUInt64LE(0)}`);
    const pages = 1 + header.readUInt32LE(12);
    const page = pageAt(await this.#read(offset, pages * this.#pageSize));
    if (page.flags !== branchFlag && page.flags !== leafFlag)
      throw this.fail(`page ${id} has flags ${page.flags}, where a branch or leaf page belongs`);
    return page;
  }
}

// Where an element's key starts (pos, counted from the element) and how long it is, by page kind.
const branchLayout = { pos: 0, keySize: 4 };
const leafLayout = { pos: 4, keySize: 8, valueSize: 12 };

function elementKey(page: Page, index: number, layout: { pos: number; keySize: number }): Buffer {
  const element = pageHeaderBytes + index * elementBytes;
  const start = element + page.bytes.readUInt32LE(element + layout.pos);
  return page.bytes.subarray(start, start + page.bytes.readUInt32LE(element + layout.keySize));
}

const branchKey = (page: Page, index: number) => elementKey(page, index, branchLayout);
const leafKey = (page: Page, index: number) => elementKey(page, index, leafLayout);
const branchChild = (page: Page, index: number) =>
  page.bytes.readBigUInt64LE(pageHeaderBytes + index * elementBytes + 8);

/** A leaf element's flags and value (the value follows the key). */
function leafValue(page: Page, index: number): { flags: number; value: Buffer } {
  const element = pageHeaderBytes + index * elementBytes;
  const start =
    element +
    page.bytes.readUInt32LE(element + leafLayout.pos) +
    page.bytes.readUInt32LE(element + leafLayout.keySize);
  return {
    flags: page.bytes.readUInt32LE(element),
    value: page.bytes.subarray(start, start + page.bytes.readUInt32LE(element + leafLayout.valueSize)),
  };
}

/** The value of the bucket called `name` in the B+tree rooted at `root`, if there is one. */
async function findBucket(db: BboltFile, root: Page, name: Buffer): Promise<Buffer | undefined> {
  let page = root;
  while (page.flags === branchFlag) {
    // The last element whose key is at most `name` leads to the page that can hold it.
    let child = 0;
    for (let i = 1; i < page.count && Buffer.compare(branchKey(page, i), name) <= 0; i++) child = i;
    page = await db.page(branchChild(page, child));
  }
  for (let i = 0; i < page.count; i++) {
    if (!leafKey(page, i).equals(name)) continue;
    const { flags, value } = leafValue(page, i);
    return flags & bucketLeafFlag ? value : undefined;
  }
  return undefined;
}

/** The last key of the B+tree under `page`, or undefined when it holds none. */
async function lastKey(db: BboltFile, page: Page): Promise<Buffer | undefined> {
  if (page.flags === leafFlag) return page.count > 0 ? leafKey(page, page.count - 1) : undefined;
  // A committed tree has no empty pages, but walking back past one costs nothing.
  for (let i = page.count - 1; i >= 0; i--) {
    const key = await lastKey(db, await db.page(branchChild(page, i)));
    if (key) return key;
  }
  return undefined;
}

/** The root page of a bucket from its value: a page of its own, or inline after its header. */
async function bucketRoot(db: BboltFile, value: Buffer): Promise<Page> {
  if (value.length < bucketHeaderBytes) throw db.fail(`a bucket value of ${value.length} bytes`);
  const root = value.readBigUInt64LE(0);
  if (root !== 0n) return db.page(root);
  const inline = value.subarray(bucketHeaderBytes);
  if (inline.length < pageHeaderBytes) throw db.fail('an inline bucket without its page');
  return pageAt(inline);
}

/**
 * The store revision of the etcd snapshot (or data file) at `path`: the main revision of the last
 * key in its `key` bucket, as `etcdutl snapshot status` reports it ("0" when the bucket is empty).
 * The trailer etcd appends to a snapshot lies past every page and is never read.
 */
export async function readSnapshotRevision(path: string): Promise<string> {
  const file = await open(path, 'r');
  try {
    const db = new BboltFile(file, path);
    const root = await db.page(await db.rootBucketPage());
    const bucket = await findBucket(db, root, keyBucket);
    if (!bucket) throw db.fail('no `key` bucket, so not an etcd database');
    const last = await lastKey(db, await bucketRoot(db, bucket));
    if (!last) return '0';
    if (last.length < revisionKeyBytes)
      throw db.fail(`the last key of the \`key\` bucket has ${last.length} bytes, not a revision`);
    return last.readBigUInt64BE(0).toString();
  } finally {
    await file.close();
  }
}
