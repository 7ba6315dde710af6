/**
 * A Homebridge plugin's config.schema.json (the dialect homebridge-config-ui-x reads) as a
 * server-rendered form, and the posted form back into the plugin's configuration.
 *
 * Every input's name carries its path and type (`cfg.devices.0.port:integer`), so the post is
 * read back without guessing; the schema is consulted only to tell arrays from objects with
 * numeric keys and to know which empty strings are required (kept) or optional (left out).
 * Without JavaScript, an array shows its items plus one blank row to add an item, and each
 * item has a "Remove" checkbox.
 */
import { html, raw, type Html } from './html.js';

export interface PluginSchemaFile {
  pluginAlias: string;
  pluginType: 'platform' | 'accessory';
  singular?: boolean;
  headerDisplay?: string;
  footerDisplay?: string;
  schema: Record<string, unknown>;
  layout?: unknown[];
  /** Older plugins give the layout as `form` (angular-schema-form's name for it). */
  form?: unknown[];
}

/** Field errors by path (`devices.0.name`), shown beside that field with aria-invalid and aria-describedby. */
export type FieldErrors = Record<string, string>;

type Schema = Record<string, unknown>;
type Path = (string | number)[];
type Kind = 'string' | 'number' | 'integer' | 'boolean' | 'json';
/** Where in the arrays a field is: the row index per `[]` of a layout key, and whether it is a blank "add" row. */
type Row = { indexes: number[]; blank: boolean };
/** What a layout item may say about the field it places. */
type Overrides = { title?: unknown; description?: unknown; placeholder?: unknown; type?: unknown; items?: unknown };
interface Context {
  prefix: string;
  errors: FieldErrors;
  config: Record<string, unknown>;
  root: Schema;
  /** Schema paths (`devices[].name`) the layout placed, left out of the properties rendered after it. */
  mentioned: Set<string>;
  /** Data paths (`devices.0.name`) the layout rendered, so a key given twice is shown once. */
  rendered: Set<string>;
  shownErrors: Set<string>;
}

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const textOf = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
const propertiesOf = (schema: Schema | undefined): Schema => (isObject(schema?.properties) ? schema.properties : {});
const own = (record: Record<string, unknown>, key: string) => (Object.hasOwn(record, key) ? record[key] : undefined);
const isRequired = (parent: Schema | undefined, key: string) =>
  (Array.isArray(parent?.required) && parent.required.includes(key)) || (isObject(own(propertiesOf(parent), key)) && (own(propertiesOf(parent), key) as Schema).required === true);

function typeOf(schema: Schema | undefined): string | undefined {
  const type = Array.isArray(schema?.type) ? schema.type.find((t) => t !== 'null') : schema?.type;
  if (typeof type === 'string') return type;
  if (isObject(schema?.properties)) return 'object';
  return schema?.items !== undefined ? 'array' : undefined;
}

type Choice = { value: unknown; title: string };
const isConstChoice = (option: unknown): option is Schema => isObject(option) && ('const' in option || (Array.isArray(option.enum) && option.enum.length === 1));

function choicesOf(schema: Schema): Choice[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => ({ value, title: String(value) }));
  const options = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (!options?.length || !options.every(isConstChoice)) return undefined;
  return options.map((option) => {
    const value = 'const' in option ? option.const : (option.enum as unknown[])[0];
    return { value, title: textOf(option.title) ?? String(value) };
  });
}

function kindOf(schema: Schema, choices: Choice[] | undefined): Kind {
  const type = typeOf(schema);
  if (type === 'number' || type === 'integer' || type === 'boolean') return type;
  if (type === 'object' || type === 'array') return 'json';
  if (choices?.length && choices.every((c) => typeof c.value === 'number')) return 'number';
  if (choices?.length && choices.every((c) => typeof c.value === 'boolean')) return 'boolean';
  return 'string';
}

// Dots and colons delimit the name, so a property name containing them is percent-encoded.
const nameSegment = (segment: string | number) => String(segment).replace(/[%.:]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
const fromNameSegment = (segment: string) => segment.replace(/%(25|2e|3a)/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
const nameOf = (path: Path, kind: Kind | 'remove') => `cfg.${path.map(nameSegment).join('.')}:${kind}`;
// Segments keep only letters and digits (anything else as `_hex_`) and are joined by one dash, so
// ids stay unique and the `--help`, `--error`, `--remove` suffixes cannot meet a property's id.
const idSegment = (segment: string | number) => String(segment).replace(/[^A-Za-z0-9]/g, (c) => `_${c.charCodeAt(0).toString(16)}_`) || '_';
const idOf = (ctx: Context, path: Path) => [ctx.prefix, ...path.map(idSegment)].join('-');
const schemaPathOf = (path: Path) => path.map((s) => (typeof s === 'number' ? '[]' : `.${s}`)).join('').replace(/^\./, '');

function valueAt(config: unknown, path: Path): unknown {
  let value = config;
  for (const segment of path) {
    if (Array.isArray(value) && typeof segment === 'number') value = value[segment];
    else if (isObject(value) && typeof segment === 'string') value = own(value, segment);
    else return undefined;
  }
  return value;
}

/** Attributes from code-chosen names; values are escaped, `true` gives a bare attribute, false/undefined none. */
const attrs = (record: Record<string, string | number | boolean | undefined>) =>
  html`${Object.entries(record).map(([name, value]) => (value === undefined || value === false ? '' : value === true ? html` ${raw(name)}` : html` ${raw(name)}="${value}"`))}`;

/** Plain text in paragraphs, one per blank-line-separated block (config-ui-x's markdown is not rendered). */
const paragraphs = (value: unknown, className: string) =>
  (typeof value === 'string' ? value.split(/\n\s*\n/) : []).flatMap((block) => (block.trim() ? [html`<p class="${className}">${block.trim()}</p>`] : []));

function annotate(ctx: Context, path: Path, description: string | undefined) {
  const id = idOf(ctx, path);
  const key = path.join('.');
  const message = textOf(own(ctx.errors, key));
  if (message) ctx.shownErrors.add(key);
  const describedBy = [description ? `${id}--help` : '', message ? `${id}--error` : ''].filter(Boolean).join(' ');
  return {
    id,
    help: description && html`<p class="help muted" id="${id}--help">${description}</p>`,
    error: message && html`<span class="field-error" id="${id}--error">${message}</span>`,
    aria: attrs({ 'aria-describedby': describedBy || undefined, 'aria-invalid': message ? 'true' : undefined }),
  };
}

function renderField(ctx: Context, schema: Schema, path: Path, required: boolean, row: Row, over: Overrides = {}): Html {
  const title = textOf(over.title) ?? textOf(schema.title) ?? String(path[path.length - 1] ?? '');
  const description = textOf(over.description) ?? textOf(schema.description);
  const type = typeOf(schema);
  if (type === 'object' && isObject(schema.properties)) {
    const fields = renderProperties(ctx, schema, path, row);
    if (fields.length === 0) return html``;
    const { id, help, error, aria } = annotate(ctx, path, description);
    return html`<fieldset id="${id}"${aria}><legend>${title}</legend>${help}${fields}${error}</fieldset>`;
  }
  if (type === 'array' && isObject(schema.items)) return renderArray(ctx, schema, path, row, title, description, Array.isArray(over.items) ? over.items : undefined);

  const { id, help, error, aria } = annotate(ctx, path, description);
  const value = row.blank ? undefined : (valueAt(ctx.config, path) ?? schema.default);
  const mustFill = required && !row.blank;
  const choices = choicesOf(schema);
  const kind = kindOf(schema, choices);
  const name = nameOf(path, kind);
  const common = html` id="${id}" name="${name}"${aria}`;
  if (kind === 'boolean' && !choices) {
    // An unchecked box posts nothing, so a hidden `false` comes first and a checked box's `true` wins.
    // A blank row has none: its untouched box must leave the row blank.
    const unchecked = !row.blank && html`<input type="hidden" name="${name}" value="false">`;
    return html`<div class="field">${unchecked}<label class="inline" for="${id}"><input type="checkbox"${common} value="true"${attrs({ checked: value === true })}> ${title}</label>${help}${error}</div>`;
  }
  const xSchemaForm = isObject(schema['x-schema-form']) ? schema['x-schema-form'] : {};
  const widget = String(over.type ?? xSchemaForm.type ?? '');
  const placeholder = textOf(over.placeholder) ?? textOf(schema.placeholder) ?? textOf(xSchemaForm.placeholder);
  const shown = value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value, null, 2) : String(value);
  let control: Html;
  if (choices) {
    // A value the schema no longer lists stays an option, so saving the form does not change it unseen.
    const listed = value === undefined || choices.some((c) => String(c.value) === String(value)) ? choices : [...choices, { value, title: String(value) }];
    const options = listed.map((c) => html`<option value="${String(c.value)}"${attrs({ selected: value !== undefined && String(c.value) === String(value) })}>${c.title}</option>`);
    control = html`<select${common}${attrs({ required: mustFill })}>${(!mustFill || value === undefined) && html`<option value=""></option>`}${options}</select>`;
  } else if (kind === 'json' || widget === 'textarea') {
    control = html`<textarea${common} rows="4"${attrs({ required: mustFill, placeholder })}>${shown}</textarea>`;
  } else if (kind === 'number' || kind === 'integer') {
    const step = kind === 'integer' ? 1 : typeof schema.multipleOf === 'number' ? schema.multipleOf : 'any';
    const bound = (v: unknown) => (typeof v === 'number' ? v : undefined);
    control = html`<input type="number"${common} value="${shown}"${attrs({ min: bound(schema.minimum), max: bound(schema.maximum), step, required: mustFill, placeholder })}>`;
  } else {
    const format = String(schema.format ?? widget);
    const inputType = widget === 'password' || format === 'password' ? 'password' : format === 'email' ? 'email' : format === 'uri' || format === 'url' ? 'url' : 'text';
    const length = (v: unknown) => (typeof v === 'number' ? v : undefined);
    control = html`<input type="${inputType}"${common} value="${shown}"${attrs({ minlength: length(schema.minLength), maxlength: length(schema.maxLength), required: mustFill, placeholder })}>`;
  }
  return html`<div class="field"><label for="${id}">${title}${mustFill && html` <span aria-hidden="true">*</span>`}</label>${control}${help}${error}</div>`;
}

function renderArray(ctx: Context, schema: Schema, path: Path, row: Row, title: string, description: string | undefined, itemLayout: unknown[] | undefined): Html {
  const itemSchema = schema.items as Schema;
  const existing = row.blank ? [] : valueAt(ctx.config, path);
  const count = Array.isArray(existing) ? existing.length : 0;
  const max = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
  const renderRow = (index: number, blank: boolean) => {
    const rowPath = [...path, index];
    const inner: Row = { indexes: [...row.indexes, index], blank: row.blank || blank };
    const label = blank ? `Add to ${title}` : `${title} ${index + 1}`;
    const fields =
      typeOf(itemSchema) === 'object' && isObject(itemSchema.properties)
        ? [...(itemLayout ? renderLayout(ctx, itemLayout, inner) : []), ...renderProperties(ctx, itemSchema, rowPath, inner)]
        : [renderField(ctx, itemSchema, rowPath, false, inner, { title: label })];
    const removeId = `${idOf(ctx, rowPath)}--remove`;
    const remove = !inner.blank && html`<label class="inline" for="${removeId}"><input type="checkbox" id="${removeId}" name="${nameOf(rowPath, 'remove')}" value="true"> Remove<span class="visually-hidden"> ${label}</span></label>`;
    return html`<fieldset class="array-item"><legend>${label}</legend>${fields}${remove}</fieldset>`;
  };
  const rows = Array.from({ length: count }, (_, i) => renderRow(i, false));
  if (count < max) rows.push(renderRow(count, true));
  const { id, help, error, aria } = annotate(ctx, path, description);
  return html`<fieldset class="array" id="${id}"${aria}><legend>${title}</legend>${help}${rows}${error}</fieldset>`;
}

/** The object's properties in schema order, except those the layout placed. */
function renderProperties(ctx: Context, schema: Schema, path: Path, row: Row): Html[] {
  return Object.entries(propertiesOf(schema)).flatMap(([key, child]) => {
    const childPath = [...path, key];
    if (!isObject(child) || ctx.mentioned.has(schemaPathOf(childPath))) return [];
    return [renderField(ctx, child, childPath, isRequired(schema, key), row)];
  });
}

function renderLayout(ctx: Context, items: unknown[], row: Row): Html[] {
  return items.map((item) => renderLayoutItem(ctx, item, row));
}

function renderLayoutItem(ctx: Context, item: unknown, row: Row): Html {
  if (typeof item === 'string') return renderKey(ctx, item, {}, row);
  if (!isObject(item)) return html``;
  if (item.type === 'help') return html`${paragraphs(item.helpvalue, 'help')}`;
  const items = Array.isArray(item.items) ? item.items : [];
  const title = textOf(item.title);
  const descriptionText = textOf(item.description);
  const description = descriptionText && html`<p class="help muted">${descriptionText}</p>`;
  const container = item.type === 'fieldset' || item.type === 'section' || item.type === 'flex';
  if (typeof item.key === 'string' && !(container && items.length > 0)) return renderKey(ctx, item.key, item, row);
  const inner = renderLayout(ctx, items, row);
  if (item.type === 'flex' && !title) return html`<div class="row">${description}${inner}</div>`;
  if (container || title) return html`<fieldset${attrs({ class: item.type === 'flex' ? 'row' : undefined })}>${title && html`<legend>${title}</legend>`}${description}${inner}</fieldset>`;
  return html`<div>${description}${inner}</div>`;
}

/** A layout key (`options.port`, `devices[].name`) resolved against the schema and the row it is in. */
function renderKey(ctx: Context, key: string, over: Overrides, row: Row): Html {
  const tokens = key.split('.').flatMap((part) => {
    const [, name = '', brackets = ''] = /^(.*?)((?:\[\d*\])*)$/.exec(part) ?? [];
    return [...(name ? [name] : []), ...(brackets.match(/\[\d*\]/g) ?? [])];
  });
  let [schema, parent]: [Schema, Schema | undefined] = [ctx.root, undefined];
  const path: Path = [];
  let arrayDepth = 0;
  let outsideRow = false;
  for (const token of tokens) {
    const index = token === '[]' ? row.indexes[arrayDepth++] : /^\[\d+\]$/.test(token) ? Number(token.slice(1, -1)) : token;
    const next = typeof index === 'string' ? own(propertiesOf(schema), index) : schema.items;
    if (!isObject(next)) return html``;
    // An item key outside its array's row: the whole array is shown there.
    if (index === undefined) outsideRow = true;
    if (index === undefined) break;
    [parent, schema] = [schema, next];
    path.push(index);
  }
  if (path.length === 0 || path.some((_, i) => ctx.rendered.has(path.slice(0, i + 1).join('.')))) return html``;
  ctx.mentioned.add(schemaPathOf(path));
  const last = path[path.length - 1];
  const field = renderField(ctx, schema, path, typeof last === 'string' && isRequired(parent, last), row, outsideRow ? {} : over);
  // Marked only now, so the rows of an array placed here still render their own item keys.
  ctx.rendered.add(path.join('.'));
  return field;
}

/** The form's fields (no `<form>`, no submit button): header, errors no field shows, fields, footer. */
export function renderSchemaForm(file: PluginSchemaFile, config: Record<string, unknown>, options: { idPrefix?: string; errors?: FieldErrors } = {}): Html {
  const ctx: Context = { prefix: options.idPrefix ?? 'cfg', errors: options.errors ?? {}, config, root: file.schema, mentioned: new Set(), rendered: new Set(), shownErrors: new Set() };
  const top: Row = { indexes: [], blank: false };
  const layout = Array.isArray(file.layout) ? file.layout : Array.isArray(file.form) ? file.form : [];
  const fields = [...renderLayout(ctx, layout, top), ...renderProperties(ctx, file.schema, [], top)];
  const stray = Object.entries(ctx.errors).filter(([key]) => !ctx.shownErrors.has(key));
  const strayList = stray.length > 0 && html`<ul class="field-error">${stray.map(([key, message]) => html`<li>${key ? `${key}: ` : ''}${message}</li>`)}</ul>`;
  return html`<div class="schema-form">${paragraphs(file.headerDisplay, 'schema-header')}${strayList}${fields}${paragraphs(file.footerDisplay, 'schema-footer')}</div>`;
}

/** The posted fields as a tree by path; a leaf has the type and text of its field. */
type Posted = { kind?: string; raw: string; remove: boolean; children: Map<string, Posted> };
const posted = (): Posted => ({ raw: '', remove: false, children: new Map() });
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const isIndex = (key: string) => /^\d+$/.test(key);
// A row counts as blank (the untouched "add" row) when no text is typed and no box is checked.
const isBlank = (node: Posted): boolean =>
  node.children.size > 0 ? [...node.children.values()].every(isBlank) : node.kind === 'boolean' ? node.raw !== 'true' : node.raw.trim() === '';

function scalarOf(kind: string | undefined, text: string, required: boolean): unknown {
  if (kind === undefined) return undefined;
  if (kind === 'boolean') return text === '' ? undefined : text === 'true' || text === 'on';
  if (kind === 'string') return text === '' && !required ? undefined : text;
  if (text.trim() === '') return undefined;
  if (kind === 'number' || kind === 'integer') return Number.isFinite(Number(text)) ? Number(text) : text;
  if (kind === 'json') {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

function rebuild(node: Posted, schema: Schema | undefined, required: boolean): unknown {
  if (node.children.size === 0) return scalarOf(node.kind, node.raw, required);
  const keys = [...node.children.keys()];
  if (typeOf(schema) === 'array' || (!schema && keys.every(isIndex))) {
    const itemSchema = isObject(schema?.items) ? schema.items : undefined;
    const items = keys
      .filter(isIndex)
      .sort((a, b) => Number(a) - Number(b))
      .map((key) => node.children.get(key)!)
      .filter((item) => !item.remove && !isBlank(item))
      .map((item) => rebuild(item, itemSchema, true))
      .filter((item) => item !== undefined);
    return items.length > 0 || required ? items : undefined;
  }
  const out: Record<string, unknown> = {};
  for (const [key, child] of node.children) {
    const childSchema = own(propertiesOf(schema), key);
    const value = rebuild(child, isObject(childSchema) ? childSchema : undefined, isRequired(schema, key));
    if (value !== undefined) out[key] = value;
  }
  return Object.keys(out).length > 0 || required ? out : undefined;
}

/** The configuration from a posted form (`cfg.*` fields; a repeated name's last value wins). */
export function configFromFields(file: PluginSchemaFile, fields: Record<string, unknown>): Record<string, unknown> {
  const root = posted();
  for (const [name, value] of Object.entries(fields)) {
    const match = /^cfg\.(.+):(\w+)$/.exec(name);
    if (!match) continue;
    const segments = match[1]!.split('.').map(fromNameSegment);
    if (segments.some((s) => UNSAFE_KEYS.has(s))) continue;
    const node = segments.reduce((at, segment) => at.children.get(segment) ?? at.children.set(segment, posted()).get(segment)!, root);
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    const text = last === undefined || last === null ? '' : String(last);
    if (match[2] === 'remove') node.remove = text !== '' && text !== 'false';
    else [node.kind, node.raw] = [match[2], text];
  }
  const config = rebuild(root, file.schema, true);
  return isObject(config) ? config : {};
}

/**
 * Field errors from the hub's answer to an invalid configuration, in ajv's style
 * (`body.name must NOT have fewer than 1 characters`, `body/devices/0/port must be <= 65535`,
 * `body must have required property 'name'`), several joined by `, ` or `; ` and perhaps inside a
 * longer sentence. A missing property is reported at the property's own path.
 */
export function fieldErrorsFromAjv(message: string): FieldErrors {
  const errors: FieldErrors = {};
  const matches = [...message.matchAll(/(?:^|(\S*)\s+)((?:must|should)\b)/g)];
  matches.forEach((match, i) => {
    const token = match[1] ?? '';
    // This error's text runs to where the next error's path begins.
    const end = matches[i + 1]?.index ?? message.length;
    const human = message.slice(match.index + match[0].length - match[2]!.length, end).replace(/[\s,;.]+$/, '');
    // A token ending in a colon ends the sentence's preamble ("… of homebridge-x: must …"): the root.
    const pathLike = !token.endsWith(':') && /^[\w$/.[\]-]*$/.test(token);
    const path = pathLike ? token.replace(/\[(\d+)\]/g, '.$1').split(/[./]/).filter(Boolean) : [];
    if (path[0] === 'body' || path[0] === 'data') path.shift();
    const missing = /required property '([^']+)'/.exec(human)?.[1];
    if (missing !== undefined && path[path.length - 1] !== missing) path.push(missing);
    const key = path.join('.');
    if (path.some((segment) => UNSAFE_KEYS.has(segment))) return;
    errors[key] = Object.hasOwn(errors, key) ? `${errors[key]}; ${human}` : human;
  });
  return errors;
}
