// Monaco bundled with the app: `loader.config({ monaco })` stops @monaco-editor/react from
// fetching Monaco from a CDN at run time (no network in the desktop app), and the workers come
// from Vite `?worker` imports so they ship in ui/dist too.
import { loader } from "@monaco-editor/react";
import * as monaco from "monaco-editor";
import EditorWorker from "monaco-editor/editor/editor.worker?worker";
import JsonWorker from "monaco-editor/language/json/json.worker?worker";
import CssWorker from "monaco-editor/language/css/css.worker?worker";
import HtmlWorker from "monaco-editor/language/html/html.worker?worker";
import TsWorker from "monaco-editor/language/typescript/ts.worker?worker";

self.MonacoEnvironment = {
  getWorker(_id: string, label: string) {
    if (label === "json") return new JsonWorker();
    if (label === "css" || label === "scss" || label === "less") return new CssWorker();
    if (label === "html" || label === "handlebars" || label === "razor") return new HtmlWorker();
    if (label === "typescript" || label === "javascript") return new TsWorker();
    return new EditorWorker();
  },
};

loader.config({ monaco });

export { monaco };

/** Monaco language id for a path, from the languages Monaco registered. */
export function languageFor(path: string): string {
  const name = path.split("/").pop() ?? path;
  const dot = name.lastIndexOf(".");
  const ext = dot >= 0 ? name.slice(dot).toLowerCase() : "";
  for (const l of monaco.languages.getLanguages()) {
    if (l.filenames?.includes(name)) return l.id;
    if (ext && l.extensions?.includes(ext)) return l.id;
  }
  return "plaintext";
}
