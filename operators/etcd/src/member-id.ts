// etcd member IDs are uint64: above 2^53 a JavaScript number silently loses digits, so the engine
// carries them as decimal strings (what etcd3 returns) and converts only for display.

/** The hexadecimal form etcdctl prints (e.g. "8e9e05c52164694d") for a decimal uint64 ID. */
export function memberIdHex(id: string): string {
  return BigInt(id).toString(16);
}

/** True for the zero ID etcd uses to mean "no member" (e.g. no leader known). */
export function isNoMember(id: string | undefined): boolean {
  return id === undefined || id === '' || BigInt(id) === 0n;
}
