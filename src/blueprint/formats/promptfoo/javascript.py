"""The javascript assertions a row's oracle is written as in promptfoo: the rules of
``blueprint grade`` for acceptable sets, graded sets, tool calls and the check vocabulary
(docs/grading.md), in promptfoo's terms. A regex check is JavaScript's own RegExp, the
dialect the vocabulary is written in."""

from __future__ import annotations

from typing import Any, Final

from blueprint.formats.promptfoo.templating import literal
from blueprint.io import jsonvalues

HELPERS: Final = """\
const canon = (v) => Array.isArray(v) ? v.map(canon)
  : (v && typeof v === 'object')
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]))
    : v;
const same = (a, b) => JSON.stringify(canon(a)) === JSON.stringify(canon(b));
const matches = (member) => {
  if (typeof member === 'string') return output === member;
  try { return same(JSON.parse(output), member); } catch (e) { return false; }
};
"""

#: the check vocabulary, as ``blueprint.grading.checks`` decides it: white space is
#: Unicode's White_Space, normalisations apply in a fixed order, text checks read the
#: output's text (its JSON text when it is not text)
CHECKS: Final = """const WS = '[\\t\\n\\x0b\\x0c\\r \\x85\\xa0\\u1680\\u2000-\\u200a'
  + '\\u2028\\u2029\\u202f\\u205f\\u3000]';
const text = typeof output === 'string' ? output : JSON.stringify(output);
const norm = (t, steps) => {{
  steps = steps || [];
  if (steps.includes('nfc')) t = t.normalize('NFC');
  if (steps.includes('collapse-whitespace')) t = t.replace(new RegExp(WS + '+', 'g'), ' ');
  if (steps.includes('trim')) t = t.replace(new RegExp('^' + WS + '+|' + WS + '+$', 'g'), '');
  if (steps.includes('lowercase')) t = t.toLowerCase();
  return t;
}};
const asJson = (v) => {{
  if (typeof v !== 'string') return [true, v];
  try {{ return [true, JSON.parse(v)]; }} catch (e) {{ return [false, undefined]; }}
}};
const asNumber = (v) => {{
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return null;
  const t = norm(v, ['trim']);
  return /^-?(?:0|[1-9]\\d*)(?:\\.\\d+)?(?:[eE][+-]?\\d+)?$/.test(t) && isFinite(Number(t))
    ? Number(t) : null;
}};
const within = (n, target, tol) => {{
  const d = Math.abs(n - target);
  return d <= tol || Math.abs(d - tol) <= 1e-9 * Math.max(d, Math.abs(tol));
}};
const equal = (want, got, steps, tol) => {{
  if (typeof want === 'string') {{
    return typeof got === 'string' && norm(got, steps) === norm(want, steps);
  }}
  if (tol != null && typeof want === 'number') {{
    const n = asNumber(got);
    return n !== null && within(n, want, tol);
  }}
  const [ok, v] = asJson(got);
  return ok && same(want, v);
}};
const lev = (a, b) => {{
  a = [...a]; b = [...b];
  let prev = b.map((_, i) => i + 1); prev.unshift(0);
  for (let i = 1; i <= a.length; i++) {{
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {{
      const swap = prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      cur.push(Math.min(prev[j] + 1, cur[j - 1] + 1, swap));
    }}
    prev = cur;
  }}
  return prev[b.length];
}};
const check = (c) => {{
  const t = norm(text, c.normalize);
  switch (c.type) {{
    case 'equals': return equal(c.value, output, c.normalize, null);
    case 'number': {{
      const n = asNumber(output);
      return n !== null && within(n, c.value, c.tolerance || 0);
    }}
    case 'contains': return t.includes(norm(c.value, c.normalize));
    case 'starts-with': return t.startsWith(norm(c.value, c.normalize));
    case 'ends-with': return t.endsWith(norm(c.value, c.normalize));
    case 'contains-any': return c.values.some((v) => t.includes(norm(v, c.normalize)));
    case 'contains-all': return c.values.every((v) => t.includes(norm(v, c.normalize)));
    case 'regex': return new RegExp(c.pattern, c.flags || '').test(text);
    case 'is-json': return asJson(output)[0];
    case 'length': {{
      const size = c.unit === 'words'
        ? text.split(new RegExp(WS + '+')).filter(Boolean).length : [...text].length;
      return (c.min == null || size >= c.min) && (c.max == null || size <= c.max);
    }}
    case 'levenshtein': return lev(text, c.value) <= c.maxDistance;
    case 'items': {{
      const [ok, list] = asJson(output);
      if (!ok || !Array.isArray(list)) return false;
      const left = list.slice();
      for (const item of c.required) {{
        const at = left.findIndex((have) => same(item, have));
        if (at < 0) return false;
        left.splice(at, 1);
      }}
      return left.every((have) => (c.allowed || []).some((a) => same(a, have)));
    }}
    case 'not': return !check(c.check);
    case 'all': return c.checks.every(check);
    case 'any': return c.checks.some(check);
    case 'weighted': {{
      const weights = c.weights || c.checks.map(() => 1);
      const total = weights.reduce((a, b) => a + b, 0);
      const earned = c.checks.reduce((sum, part, i) => sum + (check(part) ? weights[i] : 0), 0);
      return (total > 0 ? earned / total : 0) >= c.threshold;
    }}
    default: throw new Error('a ' + c.type + ' check is not run by this assertion');
  }}
}};
"""

#: every check of the row's gate, or the check that defines its acceptable set
ALL_CHECKS: Final = """const checks = {data};
{helpers}const failing = checks.findIndex((c) => !check(c));
return {{ pass: failing < 0, score: failing < 0 ? 1 : 0,
  reason: failing < 0 ? 'every check passes'
    : 'check ' + (failing + 1) + ' of ' + checks.length + ' fails' }};
"""

#: a reference answer or acceptable set compared under the row's normalize and tolerance,
#: a graded set passing at the row's threshold
COMPARED: Final = """const rule = {data};
{helpers}let best = -1;
for (const member of rule.members) {{
  if (equal(member.value, output, rule.normalize, rule.tolerance)) {{
    best = Math.max(best, member.grade);
  }}
}}
const pass = best >= rule.threshold;
return {{ pass, score: Math.max(best, 0),
  reason: best < 0 ? 'matched no acceptable answer'
    : 'matched an answer with grade ' + best + ', passing at ' + rule.threshold }};
"""

ACCEPTABLE: Final = """\
const acceptable = {data};
{helpers}return acceptable.some(matches);
"""

#: a graded member passes at grade 1, as ``blueprint grade`` passes it by default
GRADED: Final = """\
const graded = {data};
{helpers}let best = 0;
let found = false;
for (const member of graded) {{
  if (matches(member.value)) {{ found = true; best = Math.max(best, member.grade); }}
}}
return {{ pass: best >= 1, score: best,
  reason: found ? 'matched an acceptable answer with grade ' + best + ', passing at 1'
    : 'matched no acceptable answer' }};
"""

#: the rules of ``blueprint grade`` for tool calls: the expected arguments among those given,
#: expected calls in order (others may come between) or each matched by a call of its own,
#: extra calls allowed, a forbidden call (by name, or with the arguments it names) fails;
#: output that holds no calls gives no verdict (an error), as it does in ``grade``
TOOL_CALLS: Final = """\
const expected = {data};
{helpers}let parsed = output;
if (typeof output === 'string') {{
  try {{ parsed = JSON.parse(output); }} catch (e) {{ parsed = undefined; }}
}}
const callLike = (c) => c && typeof c === 'object'
  && (typeof c.name === 'string' || (c.function && typeof c.function === 'object'));
let raw;
if (Array.isArray(parsed) && parsed.every(callLike)) raw = parsed;
else if (parsed && Array.isArray(parsed.tool_calls)) raw = parsed.tool_calls;
else if (parsed && Array.isArray(parsed.toolCalls)) raw = parsed.toolCalls;
else throw new Error('the output holds no tool calls: no verdict');
const calls = [];
for (const call of raw) {{
  const fn = (call && call.function && typeof call.function === 'object') ? call.function : call;
  if (!fn || typeof fn.name !== 'string') {{
    return {{ pass: false, score: 0, reason: 'a recorded call has no name' }};
  }}
  let args = fn.arguments !== undefined ? fn.arguments : fn.args;
  if (typeof args === 'string') {{
    if (args.trim() === '') args = {{}};
    else {{ try {{ args = JSON.parse(args); }} catch (e) {{}} }}
  }}
  calls.push({{ name: fn.name, arguments: args == null ? {{}} : args }});
}}
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const argsFit = (want, got) => {{
  if (!isObject(want) || Object.keys(want).length === 0) return true;
  if (!isObject(got)) return false;
  return Object.keys(want).every((k) => k in got && same(want[k], got[k]));
}};
for (const f of expected.forbidden || []) {{
  const hit = calls.find((g) => g.name === f.name
    && (f.arguments == null || argsFit(f.arguments, g.arguments)));
  if (hit) return {{ pass: false, score: 0, reason: 'made a forbidden call: ' + hit.name }};
}}
const wanted = expected.calls;
const fits = (w, g) => w.name === g.name && argsFit(w.arguments, g.arguments);
const found = wanted.map(() => false);
if ((expected.order || 'exact') === 'exact') {{
  let at = 0;
  for (const g of calls) if (at < wanted.length && fits(wanted[at], g)) found[at++] = true;
}} else {{
  const owner = new Map();
  const assign = (i, seen) => {{
    for (let p = 0; p < calls.length; p++) {{
      if (seen.has(p) || !fits(wanted[i], calls[p])) continue;
      seen.add(p);
      if (!owner.has(p) || assign(owner.get(p), seen)) {{ owner.set(p, i); return true; }}
    }}
    return false;
  }};
  wanted.forEach((_, i) => {{ found[i] = assign(i, new Set()); }});
}}
const made = found.filter(Boolean).length;
const ok = made === wanted.length;
return {{ pass: ok, score: ok ? 1 : (wanted.length ? made / wanted.length : 0),
  reason: ok ? 'the expected calls were made'
    : (wanted.length - made) + ' of ' + wanted.length + ' expected call(s) missing' }};
"""


def javascript(template: str, data: Any) -> dict[str, Any]:
    helpers = HELPERS + CHECKS.format() if template in (ALL_CHECKS, COMPARED) else HELPERS
    code = template.format(data=jsonvalues.dumps_text(data), helpers=helpers)
    return {"type": "javascript", "value": literal(code)}
