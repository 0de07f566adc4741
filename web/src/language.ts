/**
 * The editor's language, all from ckql's language service (no second
 * grammar): highlighting from the lexer's tokens, live diagnostics with
 * their quick fixes, completion with fields' types, and hover. What the
 * service needs to know about the source (resources, fields, values) is
 * asked of the server as the service reports it missing, then the editor
 * checks or completes again.
 */
import { autocompletion, startCompletion } from '@codemirror/autocomplete';
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import { linter } from '@codemirror/lint';
import type { Action, Diagnostic as EditorDiagnostic } from '@codemirror/lint';
import { RangeSetBuilder, StateEffect } from '@codemirror/state';
import type { Extension } from '@codemirror/state';
import { Decoration, EditorView, ViewPlugin, hoverTooltip } from '@codemirror/view';
import type { DecorationSet, ViewUpdate } from '@codemirror/view';
import { complete } from '../../src/language-service/complete.js';
import type { CompletionKind, Lookup } from '../../src/language-service/complete.js';
import type { LanguageContext } from '../../src/language-service/context.js';
import { diagnose } from '../../src/language-service/diagnose.js';
import type { Diagnostic } from '../../src/language-service/diagnose.js';
import { highlight } from '../../src/language-service/highlight.js';
import type { TokenClass } from '../../src/language-service/highlight.js';
import { hover } from '../../src/language-service/hover.js';
import { parse } from '../../src/syntax/parse.js';
import { h } from './dom.js';

/** What the editor asks of the page: the context known now, and a way to learn what is missing. */
export interface LanguageHost {
  context(): LanguageContext;
  /** asks the server for what the service lacked; true when something new was learned */
  learn(lookups: readonly Lookup[]): Promise<boolean>;
  /** told the diagnostics after each check (for the page's problem line) */
  checked(diagnostics: readonly Diagnostic[]): void;
  /** an error the server found when the query ran, while the text is the one it ran */
  serverProblem(text: string): { readonly from: number; readonly to: number; readonly message: string } | undefined;
}

/** The `$names` of a query in order of first use, from the lexer (a query still being typed has them too). */
export function parameterNames(text: string): string[] {
  const names = highlight(text)
    .filter((token) => token.class === 'parameter')
    .map((token) => text.slice(token.start + 1, token.end));
  return [...new Set(names)];
}

/** The resource a query names, when it parses that far. */
function resourceNamed(text: string): string | undefined {
  try {
    const resource = parse(text).from.resource;
    return resource.kind === 'string' ? resource.value : undefined;
  } catch {
    return undefined;
  }
}

const marks: Readonly<Record<TokenClass, Decoration>> = Object.fromEntries(
  (['keyword', 'constant', 'name', 'field', 'string', 'number', 'parameter', 'operator', 'punctuation', 'comment', 'invalid'] as const).map((kind) => [
    kind,
    Decoration.mark({ class: `tok-${kind}` }),
  ]),
) as Record<TokenClass, Decoration>;

function paint(view: EditorView): DecorationSet {
  const builder = new RangeSetBuilder<Decoration>();
  for (const token of highlight(view.state.doc.toString())) {
    if (token.end > token.start) builder.add(token.start, token.end, marks[token.class]);
  }
  return builder.finish();
}

/** Highlighting: the lexer's tokens, a soft keyword painted as a keyword only where the grammar reads it so. */
const highlighting = ViewPlugin.fromClass(
  class {
    decorations: DecorationSet;
    constructor(view: EditorView) {
      this.decorations = paint(view);
    }
    update(update: ViewUpdate): void {
      if (update.docChanged) this.decorations = paint(update.view);
    }
  },
  { decorations: (plugin) => plugin.decorations },
);

/** Asks for a new check of the text as it is (see `recheck`). */
const recheckEffect = StateEffect.define<null>();

/**
 * Checks the text again now: after something was learned of the source, or
 * the server found an error in the text or ran it. (CodeMirror's
 * `forceLinting` only hastens a check already due after an edit; with none
 * due it does nothing, and the marks would stay as they were.)
 */
export function recheck(view: EditorView): void {
  view.dispatch({ effects: recheckEffect.of(null) });
}

const severityOf = { error: 'error', warning: 'warning', information: 'info', hint: 'hint' } as const;

/** A service diagnostic as the editor shows it; an end of input while typing is shown gently. */
function editorDiagnostic(diagnostic: Diagnostic, length: number): EditorDiagnostic {
  const actions: Action[] = diagnostic.fixes.map((fix) => ({
    name: fix.title,
    apply: (view) => view.dispatch({ changes: fix.edits.map((edit) => ({ from: edit.span.start, to: edit.span.end, insert: edit.text })) }),
  }));
  const from = Math.min(diagnostic.span.start, length);
  return {
    from,
    to: Math.min(Math.max(from, diagnostic.span.end), length),
    severity: diagnostic.incomplete === true ? 'info' : severityOf[diagnostic.severity],
    source: diagnostic.code,
    message: diagnostic.hint === undefined ? diagnostic.message : `${diagnostic.message} (${diagnostic.hint})`,
    actions,
  };
}

const completionType: Readonly<Record<CompletionKind, string>> = {
  keyword: 'keyword',
  punctuation: 'text',
  source: 'namespace',
  resource: 'namespace',
  field: 'property',
  name: 'variable',
  value: 'constant',
  parameter: 'variable',
  function: 'function',
};

/** The editor's language extensions over the service and the page's context. */
export function languageExtensions(host: LanguageHost): Extension[] {
  let lastView: EditorView | undefined;
  /** what completion is learning from the server, while it is out */
  let learning: Promise<void> | undefined;

  const check = linter(
    (view) => {
      lastView = view;
      const text = view.state.doc.toString();
      const context = host.context();
      // The fields of the resource named: an unknown field is only an error once they are known.
      const resource = resourceNamed(text);
      const wanted: Lookup[] = [];
      if (context.resources === undefined) wanted.push({ kind: 'resources' });
      // Only a resource the source lists: a name half typed (`from cou`) is not asked about.
      const listed = (context.resources ?? []).find((r) => r.id === resource || r.alias === resource);
      if (listed !== undefined && listed.fields === undefined) wanted.push({ kind: 'fields', resource: resource! });
      if (wanted.length > 0) {
        void host.learn(wanted).then((learned) => {
          if (learned) recheck(view);
        });
      }
      const found = diagnose(text, context);
      host.checked(found);
      const shown = found.map((diagnostic) => editorDiagnostic(diagnostic, text.length));
      const fromServer = host.serverProblem(text);
      if (fromServer !== undefined) shown.push({ ...fromServer, severity: 'error', source: 'server' });
      return shown;
    },
    { delay: 250, needsRefresh: (update) => update.transactions.some((tr) => tr.effects.some((effect) => effect.is(recheckEffect))) },
  );

  const completion = autocompletion({
    override: [
      (context: CompletionContext): CompletionResult | null => {
        const text = context.state.doc.toString();
        const result = complete(text, context.pos, host.context());
        // One restart for what is being learned: each keystroke while a lookup is out would otherwise
        // restart the list once more when it arrives, and an Enter pressed during a restart is a new line.
        if (result.pending.length > 0 && learning === undefined) {
          learning = host.learn(result.pending).then(
            (learned) => {
              learning = undefined;
              if (learned && lastView !== undefined) startCompletion(lastView);
            },
            () => {
              learning = undefined;
            },
          );
        }
        // While typing, only a word being typed opens the list (after a space, Enter stays a new line); Ctrl+Space always.
        if (!context.explicit && result.prefix === '') return null;
        if (result.items.length === 0) return null;
        const options: Completion[] = result.items.map((item) => ({
          label: item.label,
          apply: item.insert,
          type: completionType[item.kind],
          ...(item.detail === undefined ? {} : { detail: item.detail }),
          ...(item.documentation === undefined ? {} : { info: item.documentation }),
        }));
        // The service already chose the items that fit what is typed (quoted names too).
        return { from: result.span.start, to: result.span.end, options, filter: false };
      },
    ],
    icons: true,
  });

  const hovering = hoverTooltip((view, pos) => {
    const found = hover(view.state.doc.toString(), pos, host.context());
    if (found === undefined) return null;
    return {
      pos: found.span.start,
      end: found.span.end,
      above: true,
      create: () => ({ dom: h('div', { class: 'cm-hover' }, ...found.text.split('\n').map((line, k) => h(k === 0 ? 'strong' : 'div', {}, line))) }),
    };
  });

  const remember = EditorView.updateListener.of((update) => {
    lastView = update.view;
  });

  return [highlighting, check, completion, hovering, remember];
}
