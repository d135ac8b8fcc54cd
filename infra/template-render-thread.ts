import { type ErrorCode, isAppError } from '../core/errors';
import type { TemplateVersionContent } from '../core/templates/content';
import { type RenderedTemplate, type RenderOptions, renderTemplate } from '../core/templates/render';
import type { MessagePort } from 'node:worker_threads';

/** One render, as posted to a render thread. */
export interface RenderTask {
  version: TemplateVersionContent;
  variables: Record<string, unknown>;
  options: RenderOptions;
  /** Told when the thread starts the render, so the time budget excludes the wait for a free thread. */
  started: MessagePort;
}

/**
 * A thread's answer. A thrown error would cross the thread boundary as a plain Error (structured clone
 * keeps only message and stack), so an AppError travels as its parts and is rebuilt on the other side.
 */
export type RenderOutcome =
  | { rendered: RenderedTemplate }
  | { error: { code: ErrorCode; message: string; details: Record<string, unknown> } };

/** Runs in a render thread (template-render-thread.js loads it); the pool calls it once per task. */
export default function renderInThread({ version, variables, options, started }: RenderTask): RenderOutcome {
  started.postMessage(null);
  started.close();
  try {
    return { rendered: renderTemplate(version, variables, options) };
  } catch (error) {
    if (isAppError(error)) return { error: { code: error.code, message: error.message, details: error.details } };
    throw error;
  }
}
