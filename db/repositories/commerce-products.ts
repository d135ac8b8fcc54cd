import { QueryTypes, type Sequelize } from 'sequelize';

export interface ProductInput {
  externalId: string;
  title: string;
  description: string | null;
  imageUrl: string | null;
  /** Numeric text (core/commerce/money.ts amountText) or null. */
  price: string | null;
  currency: string | null;
  url: string | null;
}

export interface ProductRecord extends ProductInput {
  id: string;
  source: string;
  updatedAt: Date;
}

interface ProductRow {
  id: string; external_id: string; title: string; description: string | null; image_url: string | null; price: string | null;
  currency: string | null; url: string | null; source: string; updated_at: Date;
}

const toProduct = (row: ProductRow): ProductRecord => ({
  id: row.id,
  externalId: row.external_id,
  title: row.title,
  description: row.description,
  imageUrl: row.image_url,
  price: row.price,
  currency: row.currency,
  url: row.url,
  source: row.source,
  updatedAt: new Date(row.updated_at),
});

/**
 * Upserts a batch of products by external id in one statement (one multi-row insert from a JSON array).
 * The caller keeps one entry per external id: a statement may not change the same row twice. `source` is
 * `api` for PUT /commerce/products, a store connector's own name otherwise (docs/commerce.md).
 */
export async function upsertProducts(db: Sequelize, workspaceId: string, products: readonly ProductInput[], source = 'api'): Promise<number> {
  if (products.length === 0) return 0;
  const rows = await db.query<{ upserted: string }>(
    `WITH upserted AS (
       INSERT INTO commerce_products AS p (id, workspace_id, external_id, title, description, image_url, price, currency, url, source)
       SELECT gen_random_uuid(), $1, i."externalId", i.title, i.description, i."imageUrl", i.price::numeric, i.currency, i.url, $3
       FROM jsonb_to_recordset($2::jsonb) AS i("externalId" text, title text, description text, "imageUrl" text, price text, currency text, url text)
       ON CONFLICT (workspace_id, external_id) DO UPDATE SET
         title = EXCLUDED.title, description = EXCLUDED.description, image_url = EXCLUDED.image_url, price = EXCLUDED.price,
         currency = EXCLUDED.currency, url = EXCLUDED.url, source = EXCLUDED.source, updated_at = now()
       RETURNING 1
     )
     SELECT count(*) AS upserted FROM upserted`,
    { bind: [workspaceId, JSON.stringify(products), source], type: QueryTypes.SELECT },
  );
  return Number(rows[0].upserted);
}

/** Whether the product existed (and is now gone). */
export async function deleteProduct(db: Sequelize, workspaceId: string, externalId: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM commerce_products WHERE workspace_id = $1 AND external_id = $2 RETURNING id', {
    bind: [workspaceId, externalId],
    type: QueryTypes.SELECT,
  });
  return rows.length > 0;
}

/** The catalogue, most recently updated first. */
export async function listProducts(db: Sequelize, workspaceId: string, page: { limit: number; offset: number }): Promise<ProductRecord[]> {
  const rows = await db.query<ProductRow>(
    `SELECT id, external_id, title, description, image_url, price::text AS price, currency, url, source, updated_at
       FROM commerce_products WHERE workspace_id = $1 ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3`,
    { bind: [workspaceId, page.limit, page.offset], type: QueryTypes.SELECT },
  );
  return rows.map(toProduct);
}
