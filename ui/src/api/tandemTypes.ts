// Shapes of Tandem's own event, checkpoint, rewind, review, fork, replay, move and budget routes that upstream's OpenAPI document does not contain,
// generated from our server's document (ui/openapi.tandem.json into tandem.gen.ts); this file
// only gives them their short names.
import type { components } from "./tandem.gen";

type Schemas = components["schemas"];

export type ApproveEditedRequest = Schemas["ApproveEditedRequest"];
export type ApproveEditedResponse = Schemas["ApproveEditedResponse"];
/** What a conversation may spend before its run pauses (`GET`/`PUT …/budget`); an absent limit is none. */
export type Budget = Schemas["Budget"];
/**
 * The Tandem fields of `POST /api/conversations` beside upstream's: the server's document
 * leaves them among the request's open extra fields, so they are named here, from its schemas.
 */
export interface TandemStartFields {
  budget?: Budget;
}
export type ConversationInfo = Schemas["ConversationInfo"];
export type ExportConversationRequest = Schemas["ExportConversationRequest"];
export type ForkConversationRequest = Schemas["ForkConversationRequest"];
export type ForkWorkspace = Schemas["ForkWorkspace"];
export type Checkpoint = Schemas["Checkpoint"];
export type ImportedConversation = Schemas["ImportedConversation"];
export type MovedTo = Schemas["MovedTo"];
/** The `options` part of an import (a multipart part, so not in the OpenAPI document's schemas). */
export interface ImportConversationOptions {
  working_dir?: string | null;
  secrets?: Record<string, string>;
  /** Arriving: read-only on the target until `arrival` accepts it (after the source is fenced). */
  pending?: boolean;
}
export type CheckpointList = Schemas["CheckpointList"];
export type ReplayBrowser = Schemas["ReplayBrowser"];
export type ReplayState = Schemas["ReplayState"];
export type ReplayTerminal = Schemas["ReplayTerminal"];
export type ReplayWorkspace = Schemas["ReplayWorkspace"];
export type RejectHunkRequest = Schemas["RejectHunkRequest"];
export type RejectHunkResponse = Schemas["RejectHunkResponse"];
export type RestoreScope = Schemas["RestoreScope"];
export type RewindFiles = Schemas["RewindFiles"];
export type RewindRequest = Schemas["RewindRequest"];
export type RewindResponse = Schemas["RewindResponse"];
