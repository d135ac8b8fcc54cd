import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { loadConfig } from '../core/config';
import { connectTemporal } from '../temporal/connection';
import { SEARCH_ATTRIBUTES } from './temporal-cli';

const { IndexedValueType } = temporal.api.enums.v1;
const TYPES: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  Keyword: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KeywordList: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/**
 * Registers on a dev server that is already running the search attributes it lacks. `--search-attribute`
 * (scripts/temporal-cli.ts) registers them when the dev server starts, but `npm start` and the test stack
 * reuse a server that answers, which an older checkout may have started without a newer attribute
 * (MessageIds): a workflow start naming an unregistered attribute is refused. Answers the names it added.
 */
export async function registerSearchAttributes(client: Client, namespace: string): Promise<string[]> {
  const { operatorService } = client.connection;
  const known = await operatorService.listSearchAttributes({ namespace });
  const missing = SEARCH_ATTRIBUTES.map((pair) => pair.split('=') as [string, string])
    .filter(([name]) => !(name in (known.customAttributes ?? {})));
  if (missing.length === 0) return [];
  await operatorService.addSearchAttributes({ namespace, searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, TYPES[type]])) });
  return missing.map(([name]) => name);
}

if (require.main === module) {
  void (async () => {
    const config = loadConfig(process.env);
    const client = await connectTemporal(config);
    try {
      const added = await registerSearchAttributes(client, config.TEMPORAL_NAMESPACE);
      if (added.length) console.log(`search attributes registered: ${added.join(', ')}`);
    } finally {
      await client.connection.close();
    }
  })();
}
