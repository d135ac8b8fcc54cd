import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { spawn } from '@lydell/node-pty';

const ROOT = resolve(__dirname, '../..');
const TSX = join(ROOT, 'node_modules/.bin/tsx');
const CLI = join(ROOT, 'packages/cli/src/main.ts');

/** An SGR escape (colour, bold, dim): what "colours appear" means in a test. */
// eslint-disable-next-line no-control-regex -- the escape character is exactly what this looks for
export const ANSI = /\x1b\[[0-9;]*m/;

/** The output as a person reads it: escapes (colours, readline's cursor moves) removed, the terminal's CRLF as LF. */
export function plain(text: string): string {
  return stripVTControlCharacters(text).replace(/\r\n/g, '\n');
}

export interface CliRun {
  /** Everything the terminal showed so far, escapes included (stdout and stderr share the terminal). */
  output: () => string;
  /** Waits until the plain output matches; answers that output. */
  waitFor: (pattern: RegExp | string, timeoutMs?: number) => Promise<string>;
  /** Types into the terminal (`'y\r'` answers a prompt). */
  write: (text: string) => void;
  /** The exit code and the whole output once the CLI ends. */
  exited: Promise<{ exitCode: number; output: string }>;
  kill: () => void;
}

/**
 * The environment the CLI sees: only what a shell would hand it and what the test gives. NO_COLOR and
 * FORCE_COLOR of the test runner's own environment are left out, so a test decides them.
 */
function cliEnv(extra: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', TERM: 'xterm-256color' };
  if (process.env.TMPDIR) base.TMPDIR = process.env.TMPDIR;
  return { ...base, ...extra };
}

/** Runs `messaging <args>` in a pseudo-terminal (stdin and stdout are a TTY), through tsx as `npm run cli` does. */
export function runCliInPty(args: string[], env: Record<string, string>): CliRun {
  // Wide enough that no table or log line wraps: a wrapped line would split what a test looks for.
  const terminal = spawn(TSX, [CLI, ...args], { name: 'xterm-256color', cols: 400, rows: 60, cwd: ROOT, env: cliEnv(env) });
  let output = '';
  const listeners = new Set<() => void>();
  terminal.onData((chunk) => {
    output += chunk;
    for (const listener of listeners) listener();
  });
  const exited = new Promise<{ exitCode: number; output: string }>((resolvePromise) => {
    terminal.onExit(({ exitCode }) => {
      // The last chunk can trail the exit event by a tick.
      setTimeout(() => resolvePromise({ exitCode, output }), 50);
    });
  });
  const waitFor = (pattern: RegExp | string, timeoutMs = 20_000) =>
    new Promise<string>((resolvePromise, reject) => {
      const matches = () => (typeof pattern === 'string' ? plain(output).includes(pattern) : pattern.test(plain(output)));
      const check = () => {
        if (!matches()) return;
        cleanup();
        resolvePromise(plain(output));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`the terminal never showed ${String(pattern)}; it showed:\n${plain(output)}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  return { output: () => output, waitFor, write: (text) => terminal.write(text), exited, kill: () => terminal.kill() };
}

/** Runs `messaging <args>` with stdin, stdout and stderr as pipes (a script, CI): no terminal anywhere. */
export function runCliPiped(args: string[], env: Record<string, string>): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = execFile(TSX, [CLI, ...args], { cwd: ROOT, env: cliEnv(env), timeout: 30_000 }, (error, stdout, stderr) => {
      resolvePromise({ exitCode: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
    child.stdin?.end();
  });
}
