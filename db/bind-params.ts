/**
 * Positional parameters for SQL built from pieces (segment rules, list filters). Every value goes
 * through here and comes back as a `$n::type` placeholder, so no value is ever spliced into SQL text;
 * the explicit cast keeps Postgres from guessing a parameter's type from its context.
 */
export class BindParams {
  readonly values: unknown[] = [];

  add(value: unknown, type: string): string {
    this.values.push(value);
    return `$${this.values.length}::${type}`;
  }

  /** jsonb travels as its JSON text: node-postgres would turn a JS array into a Postgres array literal. */
  json(value: unknown): string {
    return this.add(JSON.stringify(value), 'jsonb');
  }
}
