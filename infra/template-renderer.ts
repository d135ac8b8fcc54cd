import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import type { Logger } from 'pino';
import { Piscina } from 'piscina';
import type { Config } from '../core/config';
import { AppError } from '../core/errors';
import type { TemplateVersionContent } from '../core/templates/content';
import type { RenderedTemplate, RenderOptions } from '../core/templates/render';
import type { RenderOutcome, RenderTask } from './template-render-thread';

/**
 * Every template render, for previews (API) and sends (activities), runs on a small pool of worker
 * threads under one budget for the whole render: subject, body, every block and the chat texts together.
 * liquidjs' own limits apply per piece of Liquid, and a blocks template holds thousands of pieces, so
 * they cannot bound a render; and a render on the event loop would stall every other request of the
 * process meanwhile. A render over its budget has its thread terminated (the pool starts another) and
 * fails with 422 template_invalid: the same template and variables would fail the same way again.
 */
export interface TemplateRendererOptions {
  /** Wall time a render may run on its thread; the wait for a free thread does not count. */
  timeoutMs: number;
  /** Heap of each render thread; a render that outgrows it is stopped. */
  memoryMb: number;
  threads: number;
  /**
   * Renders that may wait for a thread; past it a render is refused at once (429 rate_limit_exceeded, try
   * again in a second) rather than queued without end behind a flood of previews. Unset: unbounded, as the
   * worker wants, whose activity slots already bound how many renders wait.
   */
  maxQueue?: number;
  /** Told about a thread that failed outside any render (the pool replaces it). */
  onThreadError?: (error: unknown) => void;
}

export interface TemplateRenderer {
  render(version: TemplateVersionContent, variables: Record<string, unknown>, options?: RenderOptions): Promise<RenderedTemplate>;
  /** Lets renders in progress finish, then stops the threads. */
  close(): Promise<void>;
}

export function templateRendererOptions(config: Config, logger?: Pick<Logger, 'error'>): TemplateRendererOptions {
  return {
    timeoutMs: config.TEMPLATE_RENDER_TIMEOUT_MS,
    memoryMb: config.TEMPLATE_RENDER_MEMORY_MB,
    threads: config.TEMPLATE_RENDER_THREADS,
    onThreadError: logger && ((err) => logger.error({ err }, 'template render thread failed')),
  };
}

function overBudget(limit: string): AppError {
  return new AppError('template_invalid', `The template exceeded its render budget (${limit})`, { field: null, line: null, column: null });
}

function rendererBusy(maxQueue: number | undefined): AppError {
  return new AppError('rate_limit_exceeded', `Every template render thread is busy and ${maxQueue} renders are waiting; try again shortly`, {
    limit: maxQueue,
    retryAfter: 1,
  });
}

/**
 * What a render may build, in characters, from the thread's memory: an eighth of it, so that with strings
 * of two bytes a character, the pieces' outputs and the page put together from them (tracking, the text
 * part) stay well inside the heap. The heap limit itself is the last resort, not the budget: a thread that
 * reaches it can bring down the process rather than only itself.
 */
function memoryCharsOf(memoryMb: number): number {
  return Math.floor((memoryMb * 1024 * 1024) / 8);
}

function isOutOfMemory(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
}

/** Only what renders crosses to the thread (a stored template also has names and dates). */
function contentOf({ id, channels, format, subject, body, channelText }: TemplateVersionContent): TemplateVersionContent {
  return { id, channels, format, subject, body, channelText };
}

function createPool(options: TemplateRendererOptions): Piscina<RenderTask, RenderOutcome> {
  const young = Math.ceil(options.memoryMb / 4);
  const pool = new Piscina<RenderTask, RenderOutcome>({
    filename: join(__dirname, 'template-render-thread.js'),
    minThreads: options.threads,
    maxThreads: options.threads,
    // A render is synchronous: a second task on the same thread would only wait behind it.
    concurrentTasksPerWorker: 1,
    // Node sizes a thread's young generation from the machine (192 MB here), outside the old-generation
    // limit; a quarter of the budget for it keeps the whole heap near the budget.
    resourceLimits: { maxOldGenerationSizeMb: options.memoryMb - young, maxYoungGenerationSizeMb: young },
    // The thread registers tsx itself; the parent's flags (tsx's loader, --eval, --inspect) stay out.
    execArgv: [],
  });
  // Without a listener, an 'error' event (a thread that dies between tasks) would throw in the process.
  pool.on('error', options.onThreadError ?? ((error: unknown) => process.emitWarning(`template render thread failed: ${String(error)}`)));
  return pool;
}

export function createTemplateRenderer(options: TemplateRendererOptions): TemplateRenderer {
  let pool: Piscina<RenderTask, RenderOutcome> | null = null;
  // Counted here, not by piscina's maxQueue: piscina keeps a task that carries an abort signal (every render
  // does, for its budget) in a queue of its own that maxQueue does not count.
  let inFlight = 0;
  const mostInFlight = options.maxQueue === undefined ? Infinity : options.threads + options.maxQueue;

  return {
    async render(version, variables, renderOptions = {}) {
      if (inFlight >= mostInFlight) throw rendererBusy(options.maxQueue);
      inFlight += 1;
      try {
        return await renderOnThread(version, variables, renderOptions);
      } finally {
        inFlight -= 1;
      }
    },

    async close() {
      await pool?.close();
    },
  };

  async function renderOnThread(version: TemplateVersionContent, variables: Record<string, unknown>, renderOptions: RenderOptions): Promise<RenderedTemplate> {
    // Started on first use, so a process (or test) that never renders spawns no thread.
    pool ??= createPool(options);
    const started = new MessageChannel();
    const budget = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    started.port1.once('message', () => {
      timer = setTimeout(() => budget.abort(), options.timeoutMs);
    });
    let outcome: RenderOutcome;
    try {
      const task: RenderTask = {
        version: contentOf(version),
        variables,
        options: { ...renderOptions, memoryChars: memoryCharsOf(options.memoryMb) },
        started: started.port2,
      };
      outcome = await pool.run(task, { transferList: [started.port2], signal: budget.signal });
    } catch (error) {
      if (budget.signal.aborted) throw overBudget(`${options.timeoutMs} ms`);
      if (isOutOfMemory(error)) throw overBudget(`${options.memoryMb} MB of memory`);
      throw error;
    } finally {
      clearTimeout(timer);
      started.port1.close();
    }
    if ('error' in outcome) throw new AppError(outcome.error.code, outcome.error.message, outcome.error.details);
    return outcome.rendered;
  }
}
