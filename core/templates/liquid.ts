import { Liquid, LiquidError, type LiquidOptions, Tag, type Template, type TagToken, type TopLevelToken } from 'liquidjs';
import { AppError } from '../errors';

/**
 * Liquid is the template language (Shopify's, well kept in liquidjs): `{{ first_name | default: "there" }}`,
 * `{% if %}`, `{% for %}` and the standard filters. Two engines share one configuration and differ only
 * in escaping: `html` HTML-escapes every output (a variable can never inject markup; `| raw` opts out),
 * `text` writes values as they are (subjects, plain-text bodies, WhatsApp and Telegram texts).
 */
export type Escaping = 'html' | 'text';

/** Where in a template's content a piece of Liquid sits, so a 422 can point at it. */
export interface TemplateProblem {
  field: string;
  line: number | null;
  column: number | null;
  message: string;
}

const OPTIONS: LiquidOptions = {
  // Unknown filters are a save-time error rather than silently doing nothing.
  strictFilters: true,
  ownPropertyOnly: true,
  // Under strict variables, `{% if x %}` and `| default:` still accept a missing x: that is their purpose.
  lenientIf: true,
  // An in-memory (empty) template map: include/render/layout can never read the server's files.
  templates: {},
  // Dates render in UTC, whatever the server's zone.
  timezoneOffset: 0,
  // Bounds for a tenant's template on a shared worker.
  parseLimit: 1_000_000,
  renderLimit: 2_000,
  memoryLimit: 50_000_000,
};

/** Partials would need a place to look them up; a template is self-contained, so these tags are refused at save. */
const UNSUPPORTED_TAGS = ['include', 'render', 'layout'];

function createEngine(escaping: Escaping): Liquid {
  const engine = new Liquid({ ...OPTIONS, ...(escaping === 'html' ? { outputEscape: 'escape' as const } : {}) });
  for (const name of UNSUPPORTED_TAGS) {
    engine.registerTag(
      name,
      class extends Tag {
        constructor(token: TagToken, remain: TopLevelToken[], liquid: Liquid) {
          super(token, remain, liquid);
          throw new Error(`{% ${name} %} is not supported: a template cannot include other files`);
        }

        *render(): Generator<unknown, void, unknown> {
          // Never reached: the constructor refuses the tag while the template is parsed.
        }
      },
    );
  }
  return engine;
}

const engines: Record<Escaping, Liquid> = { html: createEngine('html'), text: createEngine('text') };

function problemFrom(field: string, error: unknown): TemplateProblem {
  if (error instanceof LiquidError) {
    const [line, column] = error.token?.getPosition?.() ?? [null, null];
    return { field, line, column, message: error.message };
  }
  return { field, line: null, column: null, message: error instanceof Error ? error.message : String(error) };
}

export function templateInvalid(problem: TemplateProblem): AppError {
  return new AppError('template_invalid', `${problem.field}: ${problem.message}`, {
    field: problem.field,
    line: problem.line,
    column: problem.column,
  });
}

/** Parses one piece of Liquid; a syntax error, unknown filter or unsupported tag is a 422 naming field, line and column. */
export function parseLiquid(source: string, escaping: Escaping, field: string): Template[] {
  try {
    return engines[escaping].parse(source);
  } catch (error) {
    throw templateInvalid(problemFrom(field, error));
  }
}

/**
 * The variables a piece of Liquid expects from the caller, as paths (`first_name`, `order.total`):
 * loop variables, `assign`s and `forloop` are its own, not the caller's.
 */
export function liquidVariables(parsed: Template[], escaping: Escaping): string[] {
  return engines[escaping].globalFullVariablesSync(parsed);
}

/**
 * What one render of a template may allocate across all its pieces (subject, body, each block, each
 * channel's text), in string characters as liquidjs counts them, shared by the pieces as they render.
 * liquidjs' own limit is per piece (OPTIONS.memoryLimit), so a blocks template of a hundred pieces could
 * build gigabytes; a render thread's heap is far smaller, and a thread that runs into its heap limit can
 * take the whole process down with it (V8's fatal out-of-memory) instead of only stopping itself.
 */
export class RenderMemory {
  constructor(
    readonly limit: number,
    public remaining = limit,
  ) {}
}

export interface RenderLiquidOptions {
  /** An unknown variable is an error instead of an empty string. */
  strict?: boolean;
  /** The render's memory, shared with its other pieces; without it only liquidjs' per-piece limit applies. */
  memory?: RenderMemory;
}

function overMemory(memory: RenderMemory): AppError {
  return new AppError('template_invalid', `The template exceeded its render budget (${memory.limit} characters of memory)`, {
    field: null,
    line: null,
    column: null,
  });
}

export function renderLiquid(
  source: string,
  variables: Record<string, unknown>,
  escaping: Escaping,
  field: string,
  options: RenderLiquidOptions = {},
): string {
  const parsed = parseLiquid(source, escaping, field);
  const { memory } = options;
  let output: string;
  try {
    const memoryLimit = memory ? Math.min(OPTIONS.memoryLimit ?? Infinity, Math.max(memory.remaining, 0)) : undefined;
    output = String(engines[escaping].renderSync(parsed, variables, { strictVariables: options.strict ?? false, ...(memoryLimit === undefined ? {} : { memoryLimit }) }));
  } catch (error) {
    if (memory && error instanceof LiquidError && error.message.includes('memory alloc limit exceeded')) throw overMemory(memory);
    throw templateInvalid(problemFrom(field, error));
  }
  // The pieces' outputs stay alive until the page is put together: each one is spent from the render's memory.
  if (memory) {
    memory.remaining -= output.length;
    if (memory.remaining < 0) throw overMemory(memory);
  }
  return output;
}
