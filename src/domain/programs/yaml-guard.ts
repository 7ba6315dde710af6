import type { DomainError } from '../../platform/errors.js';
import { programErrors } from './errors.js';

/**
 * Nesting a document may have before it reaches the parser: flow brackets open, and columns of a
 * line's indentation and compact indicators (`- - - x`). The yaml package parses nesting
 * recursively; a few thousand levels overflow the stack, and a second such document in the same
 * process has been seen to abort Node (a fatal out-of-memory in V8's regexp compiler at the
 * exhausted stack), which no catch can stop. Real automations stay far below both bounds.
 */
const MAX_FLOW_DEPTH = 64;
const MAX_LINE_INDENT = 200;
function positionOf(text: string, offset: number): { line: number; column: number } {
  const at = Math.max(0, Math.min(offset, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < at; i++) {
    if (text.charCodeAt(i) === 10) {
      line += 1;
      lineStart = i + 1;
    }
  }
  return { line, column: at - lineStart + 1 };
}

/**
 * The offset where the document nests deeper than the parser may be asked to go, if it does. The
 * count is an upper bound, deliberately blind to quotes and comments (a bracket in a string counts
 * too) so that no quoting trick can hide brackets from it.
 */
export function tooDeepAt(text: string): { offset: number; problem: string } | undefined {
  let flow = 0;
  let indent = 0;
  let leading = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      indent = 0;
      leading = true;
      continue;
    }
    // Spaces, tabs and the block indicators - ? : before a line's content: each level of block
    // nesting takes at least one of these columns.
    if (leading && (c === 32 || c === 9 || c === 45 || c === 63 || c === 58)) {
      if (++indent > MAX_LINE_INDENT) return { offset: i, problem: `a line is indented deeper than ${MAX_LINE_INDENT} columns` };
      continue;
    }
    leading = false;
    if (c === 91 || c === 123) {
      if (++flow > MAX_FLOW_DEPTH) return { offset: i, problem: `brackets nest deeper than ${MAX_FLOW_DEPTH} levels` };
    } else if ((c === 93 || c === 125) && flow > 0) {
      flow -= 1;
    }
  }
  return undefined;
}

export function yamlError(text: string, offset: number, problem: string): DomainError {
  const { line, column } = positionOf(text, offset);
  return programErrors.YAML_ERROR({ where: '', problem, line, column }, { details: { line, column } });
}

/**
 * Refuses (YAML_ERROR at the place) a document that nests deeper than the parser may be asked to
 * go: every YAML document the hub parses passes here first.
 */
export function checkYamlNesting(text: string): void {
  const deep = tooDeepAt(text);
  if (deep) throw yamlError(text, deep.offset, `the document nests too deeply: ${deep.problem}`);
}
