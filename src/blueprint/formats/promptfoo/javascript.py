"""The javascript assertions a row's oracle is written as in promptfoo: the rules of
``blueprint grade`` for acceptable sets, graded sets and tool calls, in promptfoo's terms."""

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
    code = template.format(data=jsonvalues.dumps_text(data), helpers=HELPERS)
    return {"type": "javascript", "value": literal(code)}
