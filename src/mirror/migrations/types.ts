/** One numbered migration of the state DB: SQL run once, in a transaction, then PRAGMA user_version = version. */
export interface Migration {
  /** 001-009 mirror and sync state, 010-019 ownership/grace/snapshots, 020-029 lease and run history. */
  version: number;
  /** Short kebab-case name, for messages. */
  name: string;
  sql: string;
}
