// Fair share: the account tree (GET /v1/shares, the sshare data) as a
// picture: under every account, its children's shares (what they are owed)
// against their usage (what they used, decayed), and each user's factor.
import { store } from './store.js';
import { esc, pct } from './util.js';
import { accountColours } from './cluster.js';

const key = (s) => (s.user ? `${s.account}/${s.user}` : s.account);
const label = (s) => (s.user ? s.user : s.account);

// Children per parent row, from the listing's depth-first order.
function tree(rows) {
  const kids = new Map(), stack = [];
  for (const r of rows) {
    const d = r.depth || 0;
    stack.length = d;
    const parent = stack[d - 1];
    if (parent) {
      if (!kids.has(key(parent))) kids.set(key(parent), []);
      kids.get(key(parent)).push(r);
    }
    stack[d] = r;
  }
  return kids;
}

function stacked(children, field, colours) {
  const sum = children.reduce((a, c) => a + (c[field] || 0), 0) || 1;
  return children.map((c) => {
    const w = (100 * (c[field] || 0)) / sum;
    const col = c.user ? '#9aa5b1' : colours.get(c.account) || '#888';
    return w > 0 ? `<span style="width:${w}%;background:${col}" title="${esc(label(c))} ${w.toFixed(1)}%">${w > 12 ? esc(label(c)) : ''}</span>` : '';
  }).join('');
}

function group(parent, children, colours) {
  return `<div class="fsgroup" data-account="${esc(parent.account)}"><h4>${esc(label(parent))}</h4>
    <div class="fsrow"><span class="k">shares</span><div class="stack">${stacked(children, 'norm_shares', colours)}</div></div>
    <div class="fsrow"><span class="k">usage</span><div class="stack">${stacked(children, 'norm_usage', colours)}</div></div></div>`;
}

function table(rows, colours) {
  const body = rows.map((r) => {
    const ind = (r.depth || 0) * 18;
    const sw = r.user ? '' : `<i class="sw" style="background:${colours.get(r.account) || '#888'}"></i>`;
    const f = r.fairshare != null ? `<div class="fsbar"><span style="width:${Math.min(100, 100 * r.fairshare)}%"></span></div> ${r.fairshare.toFixed(3)}` : '';
    return `<tr class="${r.user ? 'user' : 'acct'}" data-key="${esc(key(r))}"><td style="padding-left:${ind + 8}px">${sw}${esc(label(r))}</td>
      <td class="num">${r.raw_shares ?? ''}</td><td class="num">${pct(r.norm_shares)}</td><td class="num">${pct(r.norm_usage)}</td>
      <td class="num">${r.effective_usage != null ? pct(r.effective_usage) : ''}</td><td class="num">${r.level_fs != null ? r.level_fs.toFixed(2) : ''}</td><td>${f}</td></tr>`;
  });
  return `<table class="jobs" id="sharetable"><thead><tr><th>account / user</th><th class="num">shares</th><th class="num">share of parent</th>
    <th class="num">usage of all</th><th class="num">effective usage</th><th class="num">level FS</th><th>fair-share factor</th></tr></thead><tbody>${body.join('')}</tbody></table>`;
}

export function renderShare(root) {
  const rows = store.shares, colours = accountColours(), kids = tree(rows);
  const groups = rows.filter((r) => !r.user && kids.get(key(r))?.some((c) => !c.user)).map((r) => group(r, kids.get(key(r)), colours));
  root.innerHTML = `<h1>Fair share</h1>
    <p class="hint intro">Each account is owed its shares of its parent; the bars show what its children are owed against what they used (decayed usage), side by side. An account that used more than its share sinks in priority until others catch up.</p>
    <section class="panel fsgroups" id="sharetree">${groups.join('') || '<p class="hint">no account tree configured</p>'}</section>
    <section class="panel scroll">${table(rows, colours)}</section>`;
}
