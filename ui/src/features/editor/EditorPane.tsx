// Files of the conversation's workspace: a tree, Monaco to edit and save (with a conflict
// warning when the file changed on disk since it was opened), and a "Changes" view with
// Monaco's diff editor of everything changed since the conversation started, with each file's
// hunks to accept or reject (HunkReview).
import Editor, { DiffEditor, type DiffEditorProps, type MonacoDiffEditor } from "@monaco-editor/react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import type { Api } from "../../api/client";
import { ApiError, messageOf } from "../../api/errors";
import type { WorkspaceFile } from "../../api/workspaceTypes";
import { FileTree } from "./FileTree";
import { revealLine, type Hunk } from "./hunks";
import { HunkReview } from "./HunkReview";
import { languageFor } from "./monacoSetup";
import { reversePatch } from "./reversePatch";
import { useSettled } from "./useSettled";

/** Larger files open read-only: Monaco slows down and an accidental save would be costly. */
const MAX_EDITABLE = 5 * 1024 * 1024;

interface OpenFile {
  path: string;
  file: WorkspaceFile;
  text: string;
  dirty: boolean;
  readOnlyReason: string | null;
}

/**
 * Monaco's diff editor, unmounted in an order Monaco accepts. @monaco-editor/react disposes the
 * two models before the widget, and Monaco then throws "TextModel got disposed before
 * DiffEditorWidget model got reset" (an uncaught page error on every switch from Changes to
 * Files). This wrapper's cleanup runs before the library's: it detaches the models from the
 * widget first, then disposes them.
 */
export function SafeDiffEditor(props: DiffEditorProps) {
  const ref = useRef<MonacoDiffEditor | null>(null);
  const { onMount } = props;
  useEffect(
    () => () => {
      const editor = ref.current;
      const models = editor?.getModel();
      editor?.setModel(null);
      models?.original.dispose();
      models?.modified.dispose();
    },
    [],
  );
  return (
    <DiffEditor
      {...props}
      onMount={(editor, monaco) => {
        ref.current = editor;
        onMount?.(editor, monaco);
      }}
    />
  );
}

function useMonacoTheme(): string {
  const dark = document.documentElement.dataset.theme === "dark";
  return dark ? "vs-dark" : "vs";
}

/**
 * `revision` grows whenever the workspace's files may have changed (events arrived, a rewind
 * wrote files): the tree, the Changes view and an open file without unsaved edits refresh.
 */
export function EditorPane({ api, conversationId, revision }: { api: Api; conversationId: string; revision: number }) {
  // A rejected hunk writes a file from here: what shows files refreshes on it too.
  const [written, setWritten] = useState(0);
  const filesWritten = useCallback(() => setWritten((n) => n + 1), []);
  const eventsSeen = useSettled(revision + written, 300);
  const [tab, setTab] = useState<"files" | "changes">("files");
  const tree = useQuery({
    queryKey: ["tree", api.baseUrl, conversationId],
    queryFn: () => api.workspaceTree(conversationId),
    retry: false,
  });
  // The agent changes files as events arrive: refresh the tree when events come in (or a rewind).
  const refetchTree = tree.refetch;
  useEffect(() => {
    void refetchTree();
  }, [eventsSeen, refetchTree]);

  return (
    <div className="editor-pane">
      <div className="toolbar" role="tablist">
        <button role="tab" aria-selected={tab === "files"} className={`tab${tab === "files" ? " on" : ""}`} onClick={() => setTab("files")}>
          Files
        </button>
        <button role="tab" aria-selected={tab === "changes"} className={`tab${tab === "changes" ? " on" : ""}`} onClick={() => setTab("changes")}>
          Changes
        </button>
      </div>
      {tab === "files" ? (
        <FilesView api={api} conversationId={conversationId} tree={tree.data?.entries ?? []} treeError={tree.error} revision={eventsSeen} />
      ) : (
        <ChangesView api={api} conversationId={conversationId} eventsSeen={eventsSeen} onFilesChanged={filesWritten} />
      )}
    </div>
  );
}

function FilesView({ api, conversationId, tree, treeError, revision }: { api: Api; conversationId: string; tree: import("../../api/workspaceTypes").WorkspaceEntry[]; treeError: unknown; revision: number }) {
  const [open, setOpen] = useState<OpenFile | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [conflict, setConflict] = useState(false);
  const [saving, setSaving] = useState(false);
  const theme = useMonacoTheme();
  const openRef = useRef(open);
  openRef.current = open;
  const saveRef = useRef<(force?: boolean) => Promise<void>>(async () => undefined);

  async function openPath(path: string) {
    if (open?.dirty && !window.confirm(`Discard unsaved changes to ${open.path}?`)) return;
    setError(null);
    setConflict(false);
    try {
      const file = await api.readFile(conversationId, path);
      const reason = file.binary
        ? "Binary file: shown read-only."
        : file.size > MAX_EDITABLE
          ? `Large file (${(file.size / 1048576).toFixed(1)} MB): shown read-only.`
          : null;
      setOpen({ path, file, text: file.content ?? "", dirty: false, readOnlyReason: reason });
    } catch (e) {
      setOpen(null);
      // The server refuses files it will not send (413, or 422 "over 10 MB"): say why.
      const refused = e instanceof ApiError && (e.kind === "too_large" || e.kind === "invalid");
      setError(refused ? `${path} cannot be opened in the editor: ${e.detail ?? e.message}` : messageOf(e));
    }
  }

  async function save(force = false) {
    const f = openRef.current;
    if (!f || f.readOnlyReason) return;
    setSaving(true);
    setError(null);
    try {
      const saved = await api.writeFile(conversationId, f.path, f.text, force ? null : f.file.mtime_ms);
      setOpen({ ...f, file: saved, dirty: false });
      setConflict(false);
    } catch (e) {
      if (e instanceof ApiError && e.kind === "conflict") setConflict(true);
      else setError(messageOf(e));
    } finally {
      setSaving(false);
    }
  }

  saveRef.current = save;

  // The file on disk may have changed (the agent, a rewind): show it again unless the person has
  // unsaved edits (those keep the conflict warning of a save).
  const shown = useRef(revision);
  useEffect(() => {
    if (shown.current === revision) return;
    shown.current = revision;
    const f = openRef.current;
    if (!f || f.dirty || f.file.binary) return;
    let current = true;
    api.readFile(conversationId, f.path).then(
      (file) => {
        const now = openRef.current;
        if (!current || !now || now.path !== f.path || now.dirty || file.mtime_ms === now.file.mtime_ms) return;
        setOpen({ ...now, file, text: file.content ?? "" });
      },
      // Gone or unreadable now: the tree shows it; saving will say why.
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [revision, api, conversationId]);

  return (
    <div className="files-view">
      <div className="tree-col">
        {treeError ? <div className="error-text">{messageOf(treeError)}</div> : null}
        <FileTree entries={tree} openPath={open?.path ?? null} onOpen={(p) => void openPath(p)} />
      </div>
      <div className="editor-col">
        {open ? (
          <>
            <div className="toolbar">
              <span className="mono">{open.path}</span>
              {open.dirty && <span className="badge">modified</span>}
              {open.readOnlyReason && <span className="badge warn">{open.readOnlyReason}</span>}
              <button type="button" className="primary" disabled={!open.dirty || saving || Boolean(open.readOnlyReason)} onClick={() => void save()}>
                {saving ? "Saving…" : "Save (Ctrl+S)"}
              </button>
            </div>
            {conflict && (
              <div className="banner warn" role="alert">
                {open.path} changed on disk since you opened it (probably the agent).
                <button type="button" onClick={() => void save(true)}>Overwrite with mine</button>
                <button type="button" onClick={() => { setOpen({ ...open, dirty: false }); void openPath(open.path); }}>Reload theirs</button>
              </div>
            )}
            {error && <div className="error-text" role="alert">{error}</div>}
            {open.file.binary ? (
              <div className="empty">Binary file ({open.file.size} bytes): not shown.</div>
            ) : (
              <Editor
                key={open.path}
                path={open.path}
                value={open.text}
                language={languageFor(open.path)}
                theme={theme}
                options={{ readOnly: Boolean(open.readOnlyReason), minimap: { enabled: false }, fontSize: 13, scrollBeyondLastLine: false, automaticLayout: true }}
                onChange={(v) => {
                  const f = openRef.current;
                  if (f) setOpen({ ...f, text: v ?? "", dirty: true });
                }}
                onMount={(editor, m) => {
                  // An action, not addCommand: addCommand keybindings are global to every
                  // Monaco editor of the page, so the last editor created would take Ctrl+S.
                  editor.addAction({
                    id: "tandem.save",
                    label: "Save",
                    keybindings: [m.KeyMod.CtrlCmd | m.KeyCode.KeyS],
                    run: () => void saveRef.current(),
                  });
                }}
              />
            )}
          </>
        ) : (
          <div className="empty">{error ?? "Open a file from the tree."}</div>
        )}
      </div>
    </div>
  );
}

function ChangesView({ api, conversationId, eventsSeen, onFilesChanged }: { api: Api; conversationId: string; eventsSeen: number; onFilesChanged(): void }) {
  const theme = useMonacoTheme();
  const diff = useQuery({
    queryKey: ["diff", api.baseUrl, conversationId, eventsSeen],
    queryFn: () => api.workspaceDiff(conversationId),
    // The list stays while a newer diff loads (a rejected hunk, events): no flash of "No changes".
    placeholderData: keepPreviousData,
    retry: false,
  });
  const [selected, setSelected] = useState<string | null>(null);
  const files = diff.data?.files ?? [];
  const file = files.find((f) => f.path === selected) ?? files[0];
  const sides = useQuery({
    queryKey: ["diffsides", api.baseUrl, conversationId, file?.path, file?.diff],
    enabled: Boolean(file) && !file?.binary,
    queryFn: async () => {
      if (!file) return null;
      const modified = file.status === "deleted" ? "" : ((await api.readFile(conversationId, file.path)).content ?? "");
      const original = file.status === "added" ? "" : reversePatch(modified, file.diff);
      return { original, modified };
    },
  });
  const diffEditor = useRef<MonacoDiffEditor | null>(null);
  const refetchDiff = diff.refetch;
  const filesChanged = useCallback(() => {
    onFilesChanged();
    void refetchDiff();
  }, [onFilesChanged, refetchDiff]);
  const reveal = useCallback(
    (h: Hunk) => {
      const editor = diffEditor.current;
      if (!editor) return;
      // A deleted file has only the original side to show.
      if (file?.status === "deleted") editor.getOriginalEditor().revealLineInCenter(Math.max(1, h.oldStart));
      else editor.getModifiedEditor().revealLineInCenter(revealLine(h));
    },
    [file?.status],
  );

  if (diff.error) return <div className="error-text">{messageOf(diff.error)}</div>;
  return (
    <div className="files-view">
      <ul className="file-tree" aria-label="Changed files">
        {files.length === 0 && <li className="empty">No changes since the conversation started.</li>}
        {files.map((f) => (
          <li key={f.path} tabIndex={0} className={f === file ? "selected" : ""} onClick={() => setSelected(f.path)} onKeyDown={(e) => e.key === "Enter" && setSelected(f.path)}>
            <span className={`change-${f.status}`}>{f.status[0]?.toUpperCase()}</span> {f.path}
          </li>
        ))}
      </ul>
      <div className="editor-col">
        {file?.binary && <div className="empty">Binary file changed: {file.path}</div>}
        {file && !file.binary && (
          <HunkReview api={api} conversationId={conversationId} path={file.path} diff={file.diff} onFilesChanged={filesChanged} onReveal={reveal} />
        )}
        <div className="diff-host">
          {file && !file.binary && sides.data && sides.data.original !== null && (
            <SafeDiffEditor
              original={sides.data.original}
              modified={sides.data.modified}
              language={languageFor(file.path)}
              theme={theme}
              options={{ readOnly: true, renderSideBySide: true, minimap: { enabled: false }, automaticLayout: true }}
              onMount={(editor) => {
                diffEditor.current = editor;
              }}
            />
          )}
          {file && !file.binary && sides.data && sides.data.original === null && (
            <Editor value={file.diff} language="diff" theme={theme} options={{ readOnly: true, minimap: { enabled: false } }} />
          )}
        </div>
      </div>
    </div>
  );
}
