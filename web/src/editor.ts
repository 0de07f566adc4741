/**
 * The query editor: CodeMirror 6, its packages picked one by one. Ctrl/Cmd+
 * Enter and Shift+Enter run; Tab indents, and Escape then Tab leaves (the
 * editor never traps Tab). Highlighting, diagnostics and completion come
 * from ckql's language service (`language.ts`).
 */
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { lintKeymap } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import type { Extension } from '@codemirror/state';
import { EditorView, drawSelection, highlightActiveLine, keymap, placeholder } from '@codemirror/view';

export interface EditorOptions {
  readonly parent: HTMLElement;
  readonly doc: string;
  /** the page's style nonce (its Content-Security-Policy allows the editor's style only with it) */
  readonly nonce: string;
  readonly onRun: () => void;
  readonly onChange: (text: string) => void;
  /** the language's extensions: highlighting, diagnostics, completion */
  readonly language: readonly Extension[];
}

export function createEditor(options: EditorOptions): EditorView {
  const run = (): boolean => {
    options.onRun();
    return true;
  };
  const state = EditorState.create({
    doc: options.doc,
    extensions: [
      EditorView.cspNonce.of(options.nonce),
      // Run first, so Shift+Enter and Mod+Enter are never taken for a new line.
      keymap.of([
        { key: 'Mod-Enter', run, preventDefault: true },
        { key: 'Shift-Enter', run, preventDefault: true },
      ]),
      history(),
      drawSelection(),
      highlightActiveLine(),
      EditorView.lineWrapping,
      placeholder('from courses where subject = math limit 10'),
      EditorView.contentAttributes.of({ 'aria-label': 'ckql query', 'aria-describedby': 'editor-help' }),
      EditorView.updateListener.of((update) => {
        if (update.docChanged) options.onChange(update.state.doc.toString());
      }),
      ...options.language,
      keymap.of([...defaultKeymap, ...historyKeymap, ...lintKeymap, indentWithTab]),
    ],
  });
  return new EditorView({ state, parent: options.parent });
}

/** Replaces the text (a share link, history, format), keeping undo. */
export function setText(view: EditorView, text: string): void {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
}

/**
 * The span of an error the server found (e.g. a parameter left without a
 * value) within the text; the linter shows it beside the service's own
 * diagnostics until the text changes.
 */
export function errorRange(view: EditorView, span: { readonly start: number; readonly end: number }): { from: number; to: number } {
  const length = view.state.doc.length;
  const from = Math.min(Math.max(0, span.start), length);
  return { from, to: Math.min(Math.max(from, span.end), length) };
}
