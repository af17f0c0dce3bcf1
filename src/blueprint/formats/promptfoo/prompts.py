"""A promptfoo config's prompts, read as promptfoo reads them, and the input they give a test.

promptfoo sends each prompt, rendered with a test's vars, to the model: the prompt is what a
test's input is. A config with one prompt therefore gives each test one input, which other
runners can receive. Prompts are read here only where promptfoo's reading can be followed
without running anything: inline text (a string, or an object's ``raw``), and ``file://``
text, Markdown, Jinja, JSON, JSON Lines and YAML files (a chat-message list stays the JSON
text promptfoo reads). Functions (.py, .js), executables, CSV prompt files and files that are
not there are named, not read.
"""

from __future__ import annotations

import glob
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from blueprint.core.errors import ParseError
from blueprint.formats._io import read_text
from blueprint.formats.base import confined
from blueprint.formats.promptfoo.templating import _TEMPLATE
from blueprint.formats.yaml12 import YamlDate, read_yaml

#: promptfoo's separator between the prompts of one text file (a line of its own)
_DELIMITER: Final = "---"
#: the extensions promptfoo 0.121 takes a string ending in for a file name
_FILE_EXTENSIONS: Final = (
    ".cjs",
    ".cts",
    ".j2",
    ".js",
    ".json",
    ".jsonl",
    ".md",
    ".mjs",
    ".mts",
    ".py",
    ".ts",
    ".txt",
    ".yml",
    ".yaml",
)
_CODE: Final = re.compile(r"\.(?:py|js|cjs|mjs|ts|cts|mts|go|rb)$")
_GLOB: Final = re.compile(r"[*?{}\[\]]")
#: the whitespace JavaScript's String.prototype.trim removes
_JS_SPACE: Final = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_TRIM: Final = re.compile(f"^[{_JS_SPACE}]+|[{_JS_SPACE}]+$")
#: a Nunjucks output tag naming one variable, nothing else
_VARIABLE: Final = re.compile(r"\{\{\s*([A-Za-z_]\w*)\s*\}\}")
#: names a Nunjucks expression reads as literals or operators, not as vars
_NUNJUCKS_WORDS: Final = frozenset(
    {"true", "false", "True", "False", "none", "None", "null", "and", "or", "not", "in", "is"}
)
_LOADED_PREFIXES: Final = ("file://", "package:")
_SAFE_INTEGER: Final = 2**53


class _Unread(Exception):
    """A prompt promptfoo reads by running something, or by a reading Blueprint does not follow."""


@dataclass(frozen=True)
class Prompts:
    """A config's prompts: how many entries its ``prompts`` has, and their texts when each
    could be read as promptfoo reads it."""

    #: the entries of the config's ``prompts`` (each gives promptfoo one prompt or more)
    entries: int
    #: every prompt's text, in promptfoo's order; None when one could not be read
    texts: tuple[str, ...] | None = None
    #: why a prompt could not be read, when one could not
    unread: str | None = None

    @property
    def several(self) -> bool:
        return self.entries > 1 or (self.texts is not None and len(self.texts) > 1)

    def kept(self) -> dict[str, Any]:
        """The prompts as the set keeps them, so writing reads each test as importing did."""
        if self.texts is not None:
            return {"entries": self.entries, "texts": list(self.texts)}
        return {"entries": self.entries, "unread": self.unread or ""}

    @classmethod
    def of_kept(cls, value: Any) -> Prompts | None:
        if not isinstance(value, dict) or not isinstance(value.get("entries"), int):
            return None
        texts = value.get("texts")
        if isinstance(texts, list) and all(isinstance(text, str) for text in texts):
            return cls(value["entries"], tuple(texts))
        unread = value.get("unread")
        return cls(value["entries"], unread=unread if isinstance(unread, str) else "")


def read_prompts(config: dict[str, Any] | None, folder: Path) -> Prompts | None:
    """The prompts of a config in ``folder``, or None when it names none."""
    if not isinstance(config, dict) or "prompts" not in config:
        return None
    declared = config["prompts"]
    if isinstance(declared, str):
        entries: list[Any] = [declared]
    elif isinstance(declared, list):
        entries = declared
    elif isinstance(declared, dict):
        entries = list(declared)  # promptfoo's older form: {file: label}
    else:
        return Prompts(0, unread="the config's prompts are not a list")
    texts: list[str] = []
    try:
        for entry in entries:
            found = _entry(entry, folder)
            if not found:
                raise _Unread(f"{_shown(entry)} holds no prompt")
            texts.extend(found)
    except _Unread as reason:
        return Prompts(len(entries), unread=str(reason))
    return Prompts(len(entries), tuple(texts))


def _shown(entry: Any) -> str:
    text = entry if isinstance(entry, str) else json.dumps(entry, ensure_ascii=False)
    return repr(text if len(text) <= 60 else text[:59] + "\N{HORIZONTAL ELLIPSIS}")


def _entry(entry: Any, folder: Path) -> list[str]:
    if isinstance(entry, dict):
        raw = entry.get("raw") or entry.get("id")
        if "function" in entry:
            raise _Unread(f"the prompt {_shown(entry)} is a function")
    else:
        raw = entry
    if not isinstance(raw, str):
        raise _Unread(f"the prompt {_shown(entry)} is not text (promptfoo needs raw text)")
    return _texts(raw, folder)


def maybe_file(text: str) -> bool:
    """Whether promptfoo takes a prompt string for a file name (its maybeFilePath)."""
    if any(mark in text for mark in ("\n", "portkey://", "langfuse://", "helicone://")):
        return False
    parts = text.split(":")
    return (
        text.startswith("file://")
        or any(part.endswith(_FILE_EXTENSIONS) for part in parts[-2:])
        or text[-3:-2] == "."
        or text[-4:-3] == "."
        or any(mark in text for mark in ("*", "/", "\\"))
    )


def _texts(raw: str, folder: Path) -> list[str]:
    """The prompts one raw prompt string gives, as promptfoo's processPrompt reads them."""
    if raw.startswith("exec:"):
        raise _Unread(f"the prompt {_shown(raw)} runs a program")
    if not maybe_file(raw):
        return [raw]
    name = raw.removeprefix("file://")
    head, colon, _ = name.rpartition(":")
    if colon and len(head) > 1 and _CODE.search(head):
        raise _Unread(f"the prompt {_shown(raw)} is a function, which promptfoo runs")
    try:
        return _named(raw, name, folder)
    except OSError as error:  # a name the system refuses to look up (too long, say)
        reason = error.strerror or str(error)
        raise _Unread(f"the prompt {_shown(raw)} names no file to open: {reason}") from None


def _named(raw: str, name: str, folder: Path) -> list[str]:
    """The prompts a prompt that names a file (or a pattern of files) gives."""
    target = folder / name
    if _GLOB.search(str(target)) or target.is_dir():
        # checked before it is expanded: a pattern from / would walk the whole disk
        fixed = next(
            (Path(*target.parts[:n]) for n, part in enumerate(target.parts) if _GLOB.search(part)),
            target,
        )
        if re.search(r"[{}\[\]]|\*\*", name) or target.is_dir() or not confined(fixed, folder):
            raise _Unread(f"the prompt {_shown(raw)} is a pattern Blueprint does not expand")
        matches = sorted(glob.glob(str(target)))  # noqa: PTH207
        if not matches:
            return [raw]  # promptfoo reads a pattern that matches nothing as the text itself
        return [text for match in matches for text in _file(raw, Path(match), folder)]
    return _file(raw, target, folder)


def _file(raw: str, target: Path, folder: Path) -> list[str]:
    if not confined(target, folder):
        raise _Unread(f"the prompt {_shown(raw)} names a file outside the folders Blueprint reads")
    if not target.is_file():
        raise _Unread(f"the prompt {_shown(raw)} names no file there")
    suffix = target.suffix
    if _CODE.search(suffix):
        raise _Unread(f"the prompt {_shown(raw)} is code, which promptfoo runs")
    if suffix not in (".txt", ".md", ".j2", ".json", ".jsonl", ".yaml", ".yml"):
        kind = f"a {suffix} file" if suffix else "a file without an extension"
        raise _Unread(f"the prompt {_shown(raw)} is {kind}, which Blueprint does not read")
    try:
        if suffix in (".yaml", ".yml"):
            document = read_yaml(target)
            if document is None:
                raise _Unread(f"the prompt {_shown(raw)} is an empty YAML file")
            return [_stringified(document, raw)]
        text = read_text(target)
    except ParseError as error:
        raise _Unread(f"the prompt {_shown(raw)} cannot be read: {error.reason}") from None
    if suffix == ".txt":
        return _split(text)
    if suffix == ".jsonl":
        return [line for line in re.split(r"\r?\n", text) if line]
    if suffix == ".json":
        try:
            document = json.loads(text, parse_constant=_no_constant)
        except ValueError:
            return [text]  # promptfoo sends a file that is not JSON as it is
        return [_stringified(document, raw)]
    return [text]


def _no_constant(name: str) -> Any:
    raise ValueError(name)  # JSON.parse knows no NaN or Infinity


def _split(text: str) -> list[str]:
    """A text file's prompts: parts between lines that are the delimiter, each trimmed."""
    prompts: list[str] = []
    buffer: list[str] = []
    for line in [*re.split(r"\r?\n", text), _DELIMITER]:
        if _JS_TRIM.sub("", line) == _DELIMITER:
            part = _JS_TRIM.sub("", "\n".join(buffer))
            if part:
                prompts.append(part)
            buffer = []
        else:
            buffer.append(line)
    return prompts


def _stringified(document: Any, raw: str) -> str:
    """JSON.stringify of a document, where Python writes what JavaScript would."""
    problem = _unlike_javascript(document)
    if problem:
        raise _Unread(f"the prompt {_shown(raw)} {problem}")
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def _unlike_javascript(value: Any) -> str | None:
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            if any(re.fullmatch(r"0|[1-9]\d*", key) for key in current):
                return "has numeric keys, which JavaScript reorders"
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)
        elif isinstance(current, YamlDate):
            return "holds a date, which promptfoo writes its own way"
        elif isinstance(current, str):
            if current.startswith("file://"):
                return "names a file promptfoo loads into it"
            if re.search("[\ud800-\udfff]", current):
                return "holds a lone surrogate"
        elif isinstance(current, float) or (type(current) is int and abs(current) > _SAFE_INTEGER):
            return "holds a number JavaScript writes its own way"
    return None


# --- the input a test gives the prompt --------------------------------------------------------


@dataclass(frozen=True)
class Rendering:
    """The input a test's vars give a config's one prompt, and how it was made."""

    value: Any
    note: str


def prompt_input(
    prompt: str, variables: dict[str, Any], options: dict[str, Any], defaults: dict[str, Any]
) -> Rendering:
    """The input a test gives the config's one prompt: the prompt with the vars put in, where
    that is a plain substitution of ``{{name}}`` tags promptfoo's Nunjucks would make the
    same way; else ``{"prompt": TEMPLATE, "vars": VARS}``, which promptfoo renders at run time.

    promptfoo puts a test's ``options.prefix`` and ``options.suffix`` (else the
    defaultTest's) around the prompt, so they are part of it here too."""
    template = _around(prompt, options, defaults)
    rendered = _substituted(template, variables)
    if rendered is not None and not _VARIABLE.search(template):
        return Rendering(rendered, "the config's one prompt, which takes no vars")
    if rendered is not None:
        return Rendering(rendered, "the config's one prompt, with the test's vars put in")
    return Rendering(
        {"prompt": template, "vars": variables},
        "the config's one prompt and the test's vars, which promptfoo renders at run time"
        " (the prompt has Nunjucks that is not a plain {{var}}, or a var that is not plain text)",
    )


def _around(prompt: str, options: dict[str, Any], defaults: dict[str, Any]) -> str:
    def part(name: str) -> str:
        for holder in (options, defaults):
            value = holder.get(name)
            if isinstance(value, str) and value:
                return value
        return ""

    return part("prefix") + prompt + part("suffix")


def _substituted(template: str, variables: dict[str, Any]) -> str | None:
    """The template with each ``{{name}}`` replaced by its var, or None when Nunjucks could
    read it otherwise (another tag, an unknown name, a value that is not plain text)."""
    if _TEMPLATE.search(_VARIABLE.sub("", template)):
        return None
    texts: dict[str, str] = {}
    for name in {match.group(1) for match in _VARIABLE.finditer(template)}:
        value = variables.get(name)
        if name in _NUNJUCKS_WORDS:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            texts[name] = str(value)
        elif (
            type(value) is str
            and not _TEMPLATE.search(value)
            and not value.startswith(_LOADED_PREFIXES)
        ):
            texts[name] = value
        else:
            return None  # absent, a list promptfoo expands, a file it loads, a live template
    return _VARIABLE.sub(lambda match: texts[match.group(1)], template)


def vars_from_text(template: str, text: str, variables: dict[str, Any]) -> dict[str, Any] | None:
    """The vars that render a plain template as ``text`` (an input edited in Blueprint, read
    back into the vars its prompt takes), the others as they were; None when no plain vars
    can. Vars whose rendering is unchanged keep their own values."""
    if _TEMPLATE.search(_VARIABLE.sub("", template)):
        return None
    if _substituted(template, variables) == text:
        return dict(variables)
    pattern, seen, cut = [], set(), 0
    for match in _VARIABLE.finditer(template):
        name = match.group(1)
        if name in _NUNJUCKS_WORDS:
            return None
        pattern.append(re.escape(template[cut : match.start()]))
        pattern.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
        seen.add(name)
        cut = match.end()
    pattern.append(re.escape(template[cut:]))
    found = re.fullmatch("".join(pattern), text, re.DOTALL)
    if found is None or not seen:
        return None
    result = dict(variables)
    for name, value in found.groupdict().items():
        if _TEMPLATE.search(value) or value.startswith(_LOADED_PREFIXES):
            return None
        if _substituted(f"{{{{{name}}}}}", {name: result.get(name)}) != value:
            result[name] = value
    return result
