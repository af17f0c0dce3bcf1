"""Finding golden sets: the files and folders a command line names, or a configuration's globs.

A named file is a set, whatever it holds (reading it says what is wrong). A folder is walked:
every file a registered format reads whose content fits a format is a set, a Hugging Face
dataset folder is one set, and everything else (a ``package.json``, a pack, a set file beside
its CSV) is passed over with a note. Hidden folders and tool folders (``.venv``,
``node_modules``) are never walked.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from blueprint.core.errors import (
    AmbiguousFormatError,
    BlueprintError,
    UnknownFormatError,
    UsageError,
)
from blueprint.formats import FOLDER, REGISTRY, codecs_reading, get_codec, resolve_codec
from blueprint.formats.base import confined, outside_reason
from blueprint.formats.setfile import SUFFIX as SET_FILE_SUFFIX
from blueprint.formats.setfile import is_set_file, set_file_for

if TYPE_CHECKING:
    from blueprint.io.toml_positions import KeyPath
    from blueprint.project.config import Project, SetEntry

#: folders a walk never enters: they hold tools and caches, not a project's sets
SKIPPED_FOLDERS: Final = frozenset(
    {"node_modules", "__pycache__", "venv", "site-packages", "build", "dist"}
)
_GLOB_CHARACTERS: Final = frozenset("*?[")


@dataclass(frozen=True)
class FoundSet:
    """A set to check, and the configuration entry that speaks of it (if any)."""

    path: Path
    entry: SetEntry | None = None


@dataclass
class Discovery:
    """The sets found, and what was passed over or is missing, for the user to see."""

    sets: list[FoundSet] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: paths the configuration names as sets that do not exist
    missing: list[tuple[Path, SetEntry | None]] = field(default_factory=list)


def is_glob(text: str) -> bool:
    return any(character in _GLOB_CHARACTERS for character in text)


def _readable_extensions() -> frozenset[str]:
    return frozenset(
        extension
        for facts in REGISTRY.described()
        if facts.can_read
        for extension in facts.read_extensions
        if extension
    )


def _is_dataset_folder(path: Path) -> bool:
    """Whether a folder is a set of its own: a Hugging Face dataset folder, which says so in
    its dataset card. A folder of data files without a card is walked like any other (name
    its format with --from to read it as one dataset)."""
    from blueprint.formats.huggingface import CARD as DATASET_CARD  # a codec: imported on use

    card = path / DATASET_CARD
    if not card.is_file() or not card.read_bytes().startswith(b"---"):
        return False
    return any(codec.sniff(path, b"").ok for codec in codecs_reading(path))


#: called on every file (or dataset folder) a walk finds, before anything reads it: raises
#: when the file may not be read (a link leading out of the project)
Guard = Callable[[Path], None]


def _walk(folder: Path, notes: list[str], guard: Guard) -> Iterator[Path]:
    extensions = _readable_extensions()
    for child in sorted(folder.iterdir()):
        if child.is_symlink() and child.is_dir():
            continue  # a link to a folder may lead anywhere, even into a loop
        if child.is_dir():
            if child.name.startswith(".") or child.name in SKIPPED_FOLDERS:
                continue
            if _is_dataset_folder(child):
                _guard_set(child, guard)
                yield child
            else:
                yield from _walk(child, notes, guard)
        elif child.is_file() and child.suffix.lower() in extensions and not is_set_file(child):
            # before sniffing: a committed link to /etc/passwd must not even be opened
            _guard_set(child, guard)
            if _fits_a_format(child):
                yield child
            else:
                notes.append(f"{child}: not a golden set in any format Blueprint reads; skipped")


def _guard_set(path: Path, guard: Guard) -> None:
    """Guard everything reading a set opens: the file and the set file beside it, or every
    file of a folder read as one set."""
    guard(path)
    if path.is_dir():
        for inside in sorted(path.rglob("*")):
            guard(inside)
    elif set_file_for(path).is_symlink():
        guard(set_file_for(path))


def _fits_a_format(path: Path) -> bool:
    try:
        resolve_codec(path, None, reading=True)
    except AmbiguousFormatError:
        return True  # a set, whose format must be named: reading it says so
    except (UnknownFormatError, BlueprintError):
        return False
    return True


def expand(arguments: Iterable[str | Path], *, format: str | None = None) -> Discovery:
    """The sets a command line names: files as they are, folders walked, globs expanded.

    A folder is one set when ``format`` names a format that reads folders, or when it is a
    dataset folder with its card. A glob that matches nothing is a usage error (exit 2); a
    file that does not exist is left for the reader to report. What the command line names
    is trusted as it is, links and all; a file found by walking a folder is not (it may come
    from a pull request): one that leads outside the folder named, the working folder and
    ``--allow-path`` folders is a usage error.
    """
    folders_are_sets = format is not None and FOLDER in get_codec(format).read_extensions
    found = Discovery()
    for argument in arguments:
        paths = _argument_paths(str(argument))
        if not paths:
            raise UsageError(f"{argument}: the pattern matches no file")
        for path in map(_data_file, paths):
            if folders_are_sets and path.is_dir():
                found.sets.append(FoundSet(path))
            else:
                found.sets.extend(FoundSet(item) for item in _expand_one(path, found.notes))
    found.sets = _unique(found.sets)
    return found


def _data_file(path: Path) -> Path:
    """A set file stands for the set beside it (the CSV or JSONL its fields belong to)."""
    return path.with_name(path.name.removesuffix(SET_FILE_SUFFIX)) if is_set_file(path) else path


def _argument_paths(text: str) -> list[Path]:
    """A command-line path, or what it matches when it is a glob the shell did not expand."""
    if Path(text).exists() or not is_glob(text):
        return [Path(text)]
    # a command-line pattern may be absolute, which Path.glob does not take
    return [Path(match) for match in sorted(glob.glob(text, recursive=True))]  # noqa: PTH207


def _expand_one(path: Path, notes: list[str]) -> Iterator[Path]:
    # a named file that does not exist is still a set to read: reading it says so, in the
    # report, with the file's name
    if path.is_dir() and not _is_dataset_folder(path):
        yield from _walk(path, notes, _inside_named(path))
    else:
        yield path


def _inside_named(folder: Path) -> Guard:
    """The rule for files a walk of a named folder finds: the rule promptfoo references keep,
    with the named folder as the set's folder."""

    def guard(found: Path) -> None:
        if not confined(found, folder):
            folders = f"the folder named ({folder}) and the working folder ({Path.cwd()})"
            raise UsageError(
                f"{found}{outside_reason(found, folders, 'the files it finds in a folder')}"
            )

    return guard


def _unique(sets: list[FoundSet]) -> list[FoundSet]:
    seen: set[Path] = set()
    unique = []
    for item in sets:
        key = item.path.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def project_sets(project: Project) -> Discovery:
    """Every set the configuration names: its ``include`` globs and its ``set`` entries,
    less its ``exclude`` globs. The first entry whose path or glob matches a set speaks for it.

    Every path the configuration names, and every file its globs find, must lie inside the
    project once links are resolved (:meth:`Project.refuse_outside`); an excluded one is
    never read, so it may lead anywhere."""
    project.refuse_outside_paths()
    found = Discovery()
    root = project.root
    excluded = {
        match.resolve()
        for index, pattern in enumerate(project.config.exclude)
        for match in _glob(project, pattern, ("exclude", index))
    }

    def kept(path: Path) -> bool:
        resolved = path.resolve()
        return resolved not in excluded and not any(p in excluded for p in resolved.parents)

    def guard_for(location: KeyPath, written: str) -> Guard:
        def guard(path: Path) -> None:
            if kept(path):
                project.refuse_outside(path, location, written)

        return guard

    candidates: list[Path] = []
    for index, pattern in enumerate(project.config.include):
        guard = guard_for(("include", index), pattern)
        matches = _glob(project, pattern, ("include", index))
        if not matches:
            found.notes.append(f"include pattern {pattern!r} matches no file under {root}")
        for match in matches:
            if not kept(match):
                continue
            guard(match)
            if match.is_dir() and not _is_dataset_folder(match):
                candidates.extend(_walk(match, found.notes, guard))
            elif not is_set_file(match):
                _guard_set(match, guard)
                candidates.append(match)
    entry_matches: list[tuple[SetEntry, list[Path]]] = []
    for number, entry in enumerate(project.config.set):
        guard = guard_for(("set", number, "path"), entry.path)
        if is_glob(entry.path):
            matches = [
                m for m in _glob(project, entry.path, ("set", number, "path")) if not is_set_file(m)
            ]
            if not matches:
                found.notes.append(f"set pattern {entry.path!r} matches no file under {root}")
        else:
            target = root / entry.path
            guard(target)
            if not target.exists():
                found.missing.append((target, entry))
                continue
            matches = [target]
        for match in matches:
            _guard_set(match, guard)
        entry_matches.append((entry, matches))
        candidates.extend(matches)
    for path in candidates:
        if not kept(path):
            continue
        speaker = next(
            (
                entry
                for entry, matches in entry_matches
                if any(m.resolve() == path.resolve() for m in matches)
            ),
            None,
        )
        found.sets.append(FoundSet(_shown(path), speaker))
    found.sets = sorted(_unique(found.sets), key=lambda item: str(item.path))
    found.missing = [(_shown(path), entry) for path, entry in found.missing]
    return found


def _shown(path: Path) -> Path:
    """A path as the user would write it: relative to the working folder when inside it, so
    that reports (and GitHub annotations, which want paths from the repository root) name
    files the way the user sees them."""
    try:
        return path.relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def _glob(project: Project, pattern: str, location: KeyPath) -> list[Path]:
    root = project.root
    if Path(pattern).is_absolute():
        raise UsageError(f"{pattern}: configuration paths are relative to {root}")
    # the folder the glob lists, the part before the first wildcard, is checked before it
    # is listed ("../../**" would walk the whole disk); a path without one lists nothing but
    # its folder. Every match is checked where it is used (an excluded link is never read)
    parts = Path(pattern).parts
    fixed = list(_before_wildcard(parts))
    listed = root.joinpath(*fixed) if len(fixed) < len(parts) else (root / pattern).parent
    project.refuse_outside(listed, location, pattern)
    return sorted(root.glob(pattern))


def _before_wildcard(parts: Iterable[str]) -> Iterator[str]:
    for part in parts:
        if is_glob(part):
            return
        yield part


def select(discovered: Discovery, arguments: Iterable[str | Path]) -> Discovery:
    """The configured sets a command line names: a set itself, its set file, or a folder
    holding sets. Named paths that are no configured set are passed over with a note (so a
    hook can pass every changed file)."""
    # a configured set that is missing is the whole project's problem, reported when the
    # project is checked whole, not on every commit that touches another set
    chosen = Discovery(notes=list(discovered.notes))
    by_path = {item.path.resolve(): item for item in discovered.sets}
    for argument in arguments:
        for path in _argument_paths(str(argument)):
            resolved = _data_file(path.resolve())
            hits = [
                item for key, item in by_path.items() if key == resolved or resolved in key.parents
            ]
            if not hits:
                chosen.notes.append(f"{path}: not a configured golden set; skipped")
            chosen.sets.extend(hits)
    chosen.sets = sorted(_unique(chosen.sets), key=lambda item: str(item.path))
    return chosen
