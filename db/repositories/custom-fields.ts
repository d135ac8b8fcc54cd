import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { FieldDefinition, FieldType } from '../../core/custom-fields';

export interface CustomFieldRecord extends FieldDefinition {
  id: string;
  label: string;
  groupName: string | null;
  createdAt: Date;
}

interface CustomFieldRow {
  id: string;
  key: string;
  label: string;
  type: FieldType;
  options: string[] | null;
  group_name: string | null;
  archived: boolean;
  created_at: Date;
}

const toField = (row: CustomFieldRow): CustomFieldRecord => ({
  id: row.id,
  key: row.key,
  label: row.label,
  type: row.type,
  options: row.options,
  groupName: row.group_name,
  archived: row.archived,
  isSystem: false,
  createdAt: row.created_at,
});

export interface NewCustomField {
  key: string;
  label: string;
  type: FieldType;
  options: string[] | null;
  groupName: string | null;
}

/** Null when the workspace already has a field with this key in any case (the unique index decides). */
export async function insertCustomField(db: Sequelize, workspaceId: string, field: NewCustomField): Promise<CustomFieldRecord | null> {
  const rows = await db.query<CustomFieldRow>(
    `INSERT INTO custom_fields (id, workspace_id, key, label, type, options, group_name)
     VALUES ($1, $2, $3, $4, $5, $6::text[], $7)
     ON CONFLICT (workspace_id, lower(key)) DO NOTHING RETURNING *`,
    {
      bind: [randomUUID(), workspaceId, field.key, field.label, field.type, field.options, field.groupName],
      type: QueryTypes.SELECT,
    },
  );
  return rows[0] ? toField(rows[0]) : null;
}

export async function findCustomFieldByKey(db: Sequelize, workspaceId: string, key: string): Promise<CustomFieldRecord | null> {
  const rows = await db.query<CustomFieldRow>('SELECT * FROM custom_fields WHERE workspace_id = $1 AND lower(key) = lower($2)', {
    bind: [workspaceId, key],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toField(rows[0]) : null;
}

export async function findCustomField(db: Sequelize, workspaceId: string, fieldId: string): Promise<CustomFieldRecord | null> {
  const rows = await db.query<CustomFieldRow>('SELECT * FROM custom_fields WHERE workspace_id = $1 AND id = $2', {
    bind: [workspaceId, fieldId],
    type: QueryTypes.SELECT,
  });
  return rows[0] ? toField(rows[0]) : null;
}

/** The workspace's own fields, newest first (system fields are not stored). */
export async function listCustomFields(db: Sequelize, workspaceId: string): Promise<CustomFieldRecord[]> {
  const rows = await db.query<CustomFieldRow>(
    'SELECT * FROM custom_fields WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC',
    { bind: [workspaceId], type: QueryTypes.SELECT },
  );
  return rows.map(toField);
}

export interface CustomFieldChange {
  label?: string;
  options?: string[];
  groupName?: string | null;
  archived?: boolean;
}

/** Key and type never change: stored values and segment rules depend on both. */
export async function updateCustomField(
  db: Sequelize,
  workspaceId: string,
  fieldId: string,
  change: CustomFieldChange,
): Promise<CustomFieldRecord | null> {
  const rows = await db.query<CustomFieldRow>(
    `UPDATE custom_fields SET
       label = COALESCE($3, label),
       options = COALESCE($4::text[], options),
       group_name = CASE WHEN $5::boolean THEN $6 ELSE group_name END,
       archived = COALESCE($7, archived),
       updated_at = now()
     WHERE workspace_id = $1 AND id = $2 RETURNING *`,
    {
      bind: [
        workspaceId,
        fieldId,
        change.label ?? null,
        change.options ?? null,
        change.groupName !== undefined,
        change.groupName ?? null,
        change.archived ?? null,
      ],
      type: QueryTypes.SELECT,
    },
  );
  return rows[0] ? toField(rows[0]) : null;
}
