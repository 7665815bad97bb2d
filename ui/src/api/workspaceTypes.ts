// PROVISIONAL: shapes of Tandem's workspace routes (`/api/conversations/{id}/workspace/*`),
// which upstream's OpenAPI document (today's generator source) does not contain. They follow
// tandem-protocol's `WorkspaceTree` / `WorkspaceFile` / `FileDiff` / `WorkspaceDiff`. Once
// `tandem serve` publishes /openapi.json, `npm run -w ui gen:api` provides them: replace this
// file with aliases into generated.ts and delete these declarations.

export interface WorkspaceEntry {
  path: string;
  kind: "file" | "dir" | "symlink" | string;
  size?: number | null;
  mtime_ms?: number | null;
}

export interface WorkspaceTree {
  root: string;
  entries: WorkspaceEntry[];
  truncated: boolean;
}

export interface WorkspaceFile {
  path: string;
  size: number;
  mtime_ms: number;
  binary: boolean;
  content?: string | null;
}

export interface FileDiff {
  path: string;
  status: "added" | "modified" | "deleted" | string;
  diff: string;
  binary: boolean;
}

export interface WorkspaceDiff {
  baseline_at: string;
  files: FileDiff[];
}
