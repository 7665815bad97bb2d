// Shapes of Tandem's workspace routes (`/api/conversations/{id}/workspace/*`), which upstream's
// OpenAPI document does not contain. They are generated from our server's own document
// (tandem-protocol's `WorkspaceTree` / `WorkspaceFile` / `FileDiff` / `WorkspaceDiff`, through
// ui/openapi.tandem.json into tandem.gen.ts); this file only gives them their short names.
import type { components } from "./tandem.gen";

type Schemas = components["schemas"];

export type WorkspaceEntry = Schemas["WorkspaceEntry"];
export type WorkspaceTree = Schemas["WorkspaceTree"];
export type WorkspaceFile = Schemas["WorkspaceFile"];
export type FileDiff = Schemas["FileDiff"];
export type WorkspaceDiff = Schemas["WorkspaceDiff"];
