// Types of bundle-size.mjs for its TypeScript importers (the UI benchmarks).
export interface Size {
  raw: number;
  gz: number;
}
export const defaultDist: string;
export function bundleSize(dist?: string): {
  files: number;
  raw: number;
  gz: number;
  byKind: Map<string, Size & { n: number }>;
  startup: { js: Size; css: Size };
};
