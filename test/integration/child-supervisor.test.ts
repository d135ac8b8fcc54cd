import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChildSupervisor, restartDelayMs } from '../../scripts/child-supervisor';

describe('restart delay of a dev-stack child', () => {
  it('a child that dies at once backs off, doubling up to 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map((deaths) => restartDelayMs(deaths, 500))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('a child that ran a minute or more before dying restarts after the first delay', () => {
    expect(restartDelayMs(7, 60_000)).toBe(1_000);
  });
});

describe('the dev stack when one child dies', () => {
  it('the dead child is started again and the others keep running', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'supervisor-'));
    const supervisor = new ChildSupervisor(dir);
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      // Each start appends a line, then the child dies at once.
      supervisor.start({ name: 'crashing', command: process.execPath, args: ['-e', "require('fs').appendFileSync('starts', 'x\\n'); process.exit(3)"] });
      supervisor.start({ name: 'steady', command: process.execPath, args: ['-e', "require('fs').writeFileSync('steady', String(process.pid)); setInterval(() => {}, 1000)"] });
      const starts = () => {
        try {
          return readFileSync(join(dir, 'starts'), 'utf8').split('\n').filter(Boolean).length;
        } catch {
          return 0;
        }
      };
      // First death: back after 1 s; second: after 2 s more.
      for (const deadline = Date.now() + 15_000; starts() < 3 && Date.now() < deadline; ) await new Promise((done) => setTimeout(done, 100));
      expect(starts()).toBe(3);
      const steadyPid = Number(readFileSync(join(dir, 'steady'), 'utf8'));
      expect(() => process.kill(steadyPid, 0)).not.toThrow();
      expect(error.mock.calls.map((call) => String(call[0]))).toContainEqual(expect.stringContaining('[start] crashing exited (3); restarting it in 2 s'));
    } finally {
      await supervisor.stop(5_000);
      log.mockRestore();
      error.mockRestore();
    }
  });

  it('after stop(), a child that exits is not started again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'supervisor-'));
    const supervisor = new ChildSupervisor(dir);
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      supervisor.start({ name: 'steady', command: process.execPath, args: ['-e', "require('fs').appendFileSync('starts', 'x\\n'); setInterval(() => {}, 1000)"] });
      await new Promise((done) => setTimeout(done, 1_000));
      await supervisor.stop(5_000);
      await new Promise((done) => setTimeout(done, 1_500));
      expect(readFileSync(join(dir, 'starts'), 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
      expect(error).not.toHaveBeenCalled();
    } finally {
      error.mockRestore();
    }
  });
});
