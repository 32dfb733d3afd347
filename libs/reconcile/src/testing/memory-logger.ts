import { pino, type Logger } from 'pino';

/** A pino logger whose JSON lines are kept in memory, so tests can read what an operator logged. */
export function memoryLogger(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'debug' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { log, lines };
}
