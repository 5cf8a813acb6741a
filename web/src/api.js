// The API client: every call carries the user's token (a JWT from
// `phalanx ui` or `phalanx token`), kept for the browser tab's life only.

const KEY = 'phalanx.token';

export class AuthError extends Error {}

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

// A token in the address (#token=... from `phalanx ui`) is taken and removed
// from the address bar, so that it is neither bookmarked nor shared by copy.
export function takeTokenFromUrl() {
  const m = location.hash.match(/(?:^#|&)token=([A-Za-z0-9._-]+)/);
  if (!m) return;
  token.set(m[1]);
  history.replaceState(null, '', location.pathname + '#/cluster');
}

export async function api(path, { signal, method = 'GET', body } = {}) {
  const headers = { Authorization: `Bearer ${token.get()}` };
  if (body) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, { method, headers, signal, body: body && JSON.stringify(body) });
  const text = await r.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    throw new Error(`${path}: not JSON (HTTP ${r.status})`);
  }
  if (r.status === 401) throw new AuthError(data?.error?.message || 'not signed in');
  if (!r.ok) {
    const e = new Error(data?.error?.message || `HTTP ${r.status}`);
    e.status = r.status;
    throw e;
  }
  return data;
}
