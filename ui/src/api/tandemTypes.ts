// Shapes of Tandem's own event routes that upstream's OpenAPI document does not contain,
// generated from our server's document (ui/openapi.tandem.json into tandem.gen.ts); this file
// only gives them their short names.
import type { components } from "./tandem.gen";

type Schemas = components["schemas"];

export type ApproveEditedRequest = Schemas["ApproveEditedRequest"];
export type ApproveEditedResponse = Schemas["ApproveEditedResponse"];
