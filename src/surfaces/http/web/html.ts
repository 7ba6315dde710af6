/**
 * Server-rendered HTML for the web surfaces (`/admin`, `/os`): a tagged template that escapes
 * every interpolation unless it is already `Html`, and the page frame both surfaces share.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return (part as readonly Part[]).map(render).join('');
  return escapeHtml(String(part));
}

/** `html\`<p>${text}</p>\``: interpolations are escaped; arrays are joined; null, undefined and false vanish. */
export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < parts.length; i++) out += render(parts[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Trusted markup (made by this code, never from input). */
export const raw = (text: string) => new Html(text);

export interface NavLink {
  href: string;
  label: string;
}

export interface PageOptions {
  title: string;
  /** The product part of the title and the banner: "Admin", "Home". */
  area: string;
  nav?: NavLink[];
  /** The path of the current page, marked in the navigation. */
  current?: string;
  /** A message from the last form (query `done` or `error`), shown once at the top. */
  flash?: { kind: 'done' | 'error'; text: string };
  /** The session's CSRF token, for scripts (`meta[name=csrf-token]`). */
  csrf?: string;
  body: Html;
  /** Extra script, after the body (progressive enhancement only). */
  script?: string;
  /** A script file, loaded deferred (progressive enhancement only). */
  scriptUrl?: string;
  /** The web app manifest of an installable area. */
  manifest?: string;
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1d232a;--muted:#5b6570;--line:#d5dbe1;--accent:#0b5cad;--accent-fg:#fff;--bad:#a4161a;--bad-bg:#fbe4e4;--ok:#1b6b32;--ok-bg:#e3f4e8;--bg:#f6f8fa;--card:#fff;--code:#f0f3f6;--banner:#14324f;--focus:#b35c00;--on:#0b5cad}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9da7b3;--line:#3a4552;--accent:#6cb6ff;--accent-fg:#0d1117;--bad:#ff8182;--bad-bg:#3b1d1f;--ok:#7ee2a8;--ok-bg:#15301f;--bg:#0d1117;--card:#161b22;--code:#1f2630;--banner:#0f1b29;--focus:#ffb454;--on:#6cb6ff}}
*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
body>header{background:var(--banner);color:#fff;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
body>header .brand{font-weight:600;margin-right:auto}body>header a{color:#fff}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem .9rem}nav a[aria-current=page]{font-weight:700;text-decoration:underline}
main{max-width:72rem;margin:0 auto;padding:1rem}h1{font-size:1.5rem;margin:.4rem 0 1rem}h2{font-size:1.15rem;margin:1.4rem 0 .5rem}
section,.card{background:var(--card);border:1px solid var(--line);border-radius:.5rem;padding:.8rem 1rem;margin:.8rem 0}
table{border-collapse:collapse;width:100%;font-size:.95rem}th,td{text-align:left;padding:.35rem .4rem;border-bottom:1px solid var(--line);vertical-align:top}
.scroll{overflow-x:auto}label{display:block;margin:.35rem 0}label.inline{display:inline-block;margin-right:.6rem}
input,select,textarea,button{font:inherit;padding:.35rem .5rem;border:1px solid var(--muted);border-radius:.3rem;max-width:100%;background:var(--card);color:var(--fg)}
textarea{width:100%;font-family:ui-monospace,monospace}button{background:var(--accent);color:var(--accent-fg);border-color:var(--accent);cursor:pointer;min-height:2.25rem}
button.secondary{background:var(--card);color:var(--accent)}button.danger{background:var(--bad);border-color:var(--bad);color:var(--card)}
button:disabled,fieldset:disabled button{opacity:.55;cursor:not-allowed}
form.row{display:flex;flex-wrap:wrap;gap:.4rem;align-items:end}form.row label{margin:0}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.flash{padding:.6rem .8rem;border-radius:.4rem;margin:.5rem 0}.https-notice{padding:.1rem .8rem;border:1px solid var(--line);border-radius:.4rem;margin:.5rem 0}.fingerprint{overflow-wrap:anywhere}.flash.done{background:var(--ok-bg);color:var(--ok)}.flash.error{background:var(--bad-bg);color:var(--bad)}
.muted{color:var(--muted)}.badge{display:inline-block;padding:0 .4rem;border-radius:.6rem;font-size:.85rem;border:1px solid var(--line)}
.badge.running,.badge.online{background:var(--ok-bg);color:var(--ok)}.badge.invalid,.badge.backoff,.badge.offline{background:var(--bad-bg);color:var(--bad)}
pre{white-space:pre-wrap;word-break:break-word;background:var(--code);padding:.5rem;border-radius:.3rem;font-size:.85rem;max-height:24rem;overflow:auto}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(17rem,100%),1fr));gap:.8rem}
dl.state{display:grid;grid-template-columns:max-content 1fr;gap:.1rem .8rem;margin:.4rem 0}dl.state div{display:contents}dl.state dt{color:var(--muted)}dl.state dd{margin:0;font-weight:600}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--card);padding:.4rem;z-index:2}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(16rem,100%),1fr));gap:.7rem}
.tile{background:var(--card);border:1px solid var(--line);border-radius:.75rem;padding:.7rem .8rem;display:flex;flex-direction:column;gap:.35rem}
.tile>header{display:flex;align-items:center;gap:.45rem}.tile h3{font-size:1rem;margin:0;flex:1;overflow-wrap:anywhere}
svg.icon{width:1.4rem;height:1.4rem;fill:currentColor;flex:none;vertical-align:middle}.tile>header svg.icon{color:var(--accent)}.tile.offline>header svg.icon{color:var(--muted)}
button[value=play] .when-pause,button[value=pause] .when-play{display:none}
.tile.offline{background:var(--bg);border-style:dashed}.tile fieldset{border:0;margin:0;padding:0;min-width:0;display:flex;flex-direction:column;gap:.35rem}
.tile form{margin:0}.tile label{margin:0}.tile .slider{display:flex;gap:.4rem;align-items:center;flex-wrap:wrap}.tile input[type=range]{flex:1;min-width:6rem;accent-color:var(--on)}
.tile .buttons,.buttons{display:flex;flex-wrap:wrap;gap:.35rem}.tile .keys{display:grid;grid-template-columns:repeat(auto-fill,minmax(4.5rem,1fr));gap:.3rem}
.switch{min-width:4.5rem;border-radius:1.2rem}.switch[aria-checked=false]{background:var(--card);color:var(--fg);border-color:var(--muted)}
.stepper{display:flex;align-items:center;gap:.6rem}.stepper button{min-width:2.6rem;font-size:1.2rem}
.reading{margin:0}.big{font-size:1.35rem;font-weight:650}.tile-error{margin:0;padding:.35rem .5rem;border-radius:.3rem;background:var(--bad-bg);color:var(--bad)}
.now-playing{display:flex;gap:.6rem;align-items:center}.now-playing p{margin:0}.now-playing .title{font-weight:650}.now-playing img{border-radius:.3rem;object-fit:cover}
.quick-actions .buttons form{margin:0}button.quick{min-height:2.75rem}
.hub-status{margin:.2rem 0 .6rem;font-size:.95rem}.hub-status::before{content:"● ";color:var(--ok)}.hub-status[data-status=reconnecting]::before{color:var(--focus)}.hub-status[data-status=offline]::before{color:var(--bad)}
.js .apply,.js .confirm{display:none}
ul.plain{list-style:none;margin:0;padding:0}ul.plain>li{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center;padding:.35rem 0;border-bottom:1px solid var(--line)}
details>summary{cursor:pointer;color:var(--accent)}
.field-error{display:block;color:var(--bad);font-size:.9rem}.schema-form fieldset{border:1px solid var(--line);border-radius:.4rem;margin:.6rem 0;padding:.4rem .8rem}div.row{display:flex;flex-wrap:wrap;gap:.6rem}
dialog[open]{position:fixed;inset:0;margin:auto;height:fit-content;width:min(28rem,92vw);z-index:3;background:var(--card);color:var(--fg);border:1px solid var(--line);border-radius:.75rem;box-shadow:0 0 0 100vmax rgba(0,0,0,.45)}
@media (max-width:40rem){main{padding:.5rem}th,td{padding:.3rem .2rem}.tiles{grid-template-columns:1fr}}
`;

/** A whole page: title, banner with navigation, the flash message, the body. */
export function page(options: PageOptions): string {
  const nav = options.nav ?? [];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)} · ${escapeHtml(options.area)} · Home Control</title>
${options.csrf ? `<meta name="csrf-token" content="${escapeHtml(options.csrf)}">` : ''}
${options.manifest ? `<link rel="manifest" href="${escapeHtml(options.manifest)}"><meta name="theme-color" content="#14324f"><link rel="icon" href="/os/assets/icon-192.png"><link rel="apple-touch-icon" href="/os/assets/icon-192.png">` : ''}
<style>${STYLE}</style></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><span class="brand">Home Control · ${escapeHtml(options.area)}</span>${
    nav.length === 0
      ? ''
      : html`<nav aria-label="Sections"><ul>${nav.map((l) => html`<li><a href="${l.href}"${raw(l.href === options.current ? ' aria-current="page"' : '')}>${l.label}</a></li>`)}</ul></nav>`.text
  }</header>
<main id="main"><h1>${escapeHtml(options.title)}</h1>
${options.flash ? html`<p class="flash ${options.flash.kind}" role="${options.flash.kind === 'error' ? 'alert' : 'status'}">${options.flash.text}</p>`.text : ''}
${options.body.text}</main>
${options.script ? `<script>${options.script}</script>` : ''}${options.scriptUrl ? `<script src="${escapeHtml(options.scriptUrl)}" defer></script>` : ''}
</body></html>`;
}

/** The flash message a form's redirect carries in its query (`?done=…` or `?error=…`). */
export function flashOf(query: unknown): PageOptions['flash'] {
  const q = (query ?? {}) as Record<string, unknown>;
  if (typeof q.error === 'string' && q.error) return { kind: 'error', text: q.error.slice(0, 500) };
  if (typeof q.done === 'string' && q.done) return { kind: 'done', text: q.done.slice(0, 500) };
  return undefined;
}

/** A token as csrfTokenFor makes it (base64url): safe as an unquoted attribute value. */
const BARE_TOKEN = /^[\w-]+$/;

/**
 * The hidden CSRF field every form carries. The page has the token once for scripts
 * (`meta[name=csrf-token]`, sent as `x-csrf-token`), but a form posted without JavaScript can
 * only send its own fields, so each keeps one, written as short as HTML allows. Compressed, its
 * repeats cost next to nothing (each is a back-reference to the first).
 */
export const csrfField = (token: string) => (BARE_TOKEN.test(token) ? raw(`<input type=hidden name=_csrf value=${token}>`) : html`<input type="hidden" name="_csrf" value="${token}">`);
