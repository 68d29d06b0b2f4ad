/** The parts of postgres-meta's answers the dashboard reads (its /tables, /columns and /policies). */
export interface MetaColumn {
  name: string;
  data_type: string;
  format: string;
  is_nullable: boolean;
  is_identity: boolean;
  identity_generation: "ALWAYS" | "BY DEFAULT" | null;
  is_generated: boolean;
  is_updatable: boolean;
  default_value: unknown;
}

/** A table as /pg/tables?include_columns=true describes it. */
export interface MetaTable {
  id: number;
  schema: string;
  name: string;
  rls_enabled: boolean;
  live_rows_estimate: number;
  comment: string | null;
  primary_keys: { name: string }[];
  columns?: MetaColumn[];
}

/** A row-level security policy as /pg/policies describes it. */
export interface MetaPolicy {
  name: string;
  schema: string;
  table: string;
  action: string;
  roles: string[];
  command: string;
  definition: string | null;
  check: string | null;
}
