/**
 * Writes packages/client/src/schema.ts from the OpenAPI document the API serves (`npm run client:generate`).
 * The sync test (test/integration/client-schema-sync.test.ts) runs this script into a temporary file
 * and fails on any difference from the committed one, so the types cannot drift from the routes.
 *
 *   tsx packages/client/scripts/generate-schema.ts [out.ts]
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';
import { openApiDocument } from '../../../scripts/openapi-document';

const SCHEMA_PATH = join(__dirname, '..', 'src', 'schema.ts');

/**
 * openapi-typescript 7's own output, as its CLI writes it, with one option: `defaultNonNullable: false`. A
 * request field with a default (disableTracking, disableUtm, ...) is optional to the caller; the generator's
 * default would make it required. It changes request bodies only: the document puts defaults only there.
 */
export async function clientSchemaSource(document: object): Promise<string> {
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0], { defaultNonNullable: false, silent: true });
  return `${COMMENT_HEADER}${astToString(ast)}`;
}

if (require.main === module) {
  openApiDocument()
    .then(clientSchemaSource)
    .then((source) => {
      const out = process.argv[2] ?? SCHEMA_PATH;
      writeFileSync(out, source);
      console.log(`wrote ${out}`);
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
