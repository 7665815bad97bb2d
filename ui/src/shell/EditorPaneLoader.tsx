// Default-export wrapper so React.lazy can load Monaco (and its setup) on demand.
import "../features/editor/monacoSetup";
import { EditorPane } from "../features/editor/EditorPane";

export default EditorPane;
