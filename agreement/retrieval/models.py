"""Retrieval collections (BEIR/MTEB layout), rankings over them, and pools of (query, document) pairs to judge.

* :class:`Collection` — one retrieval dataset (e.g. ``MIRACLRetrieval``); :class:`Subset` — one of its
  subsets (a language), holding its own corpus (:class:`Document`), :class:`Query` rows and :class:`Qrel`
  rows (the original judgments, per split). Rows keep the file line they came from, so later errors can
  point at it.
* :class:`Ranking` — one system's ranked documents per query (an imported TREC run file, or made here);
  :class:`RankingEntry` one ranked document. The database refuses a document twice in one query's list.
  (TREC calls such a ranking a "run"; here "run" is left to jobs, so one word has one meaning.)
* :class:`Pool` — the union of chosen rankings' top-K on one subset, judged pair by pair in a ``graded_relevance``
  task; :class:`PoolUnit` maps each judged item back to its (query, document) pair.
"""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from hume.jobs.models import Job
from tasks_app.core.models import Item, Task, language_code


def collection_name(value: str) -> None:
    """A collection's name is a segment of its page's URL (/retrieval/<name>/): no slash or backslash, no
    control character, not "." or ".." and not blank (issue 23, item 6: "a/b" broke the collections page)."""
    bad = sorted({c for c in value if c in "/\\" or ord(c) < 32 or ord(c) == 127})
    if bad:
        shown = ", ".join(repr(c) for c in bad)
        raise ValidationError(f"A collection name cannot contain {shown} (it is part of the page's address).",
                              code="invalid")
    if value.strip() in ("", ".", ".."):
        raise ValidationError("A collection name cannot be blank, \".\" or \"..\" (it is part of the page's "
                              "address).", code="invalid")


class Collection(models.Model):
    name = models.CharField(max_length=200, unique=True, validators=[collection_name])
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Subset(models.Model):
    """One subset of a collection (MTEB ``hf_subset``), in one language, with its own corpus and queries."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="subsets")
    name = models.CharField(max_length=100, help_text="MTEB hf_subset, e.g. default or ar.")
    language = models.CharField(max_length=16, validators=[language_code])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection", "name"]
        constraints = [models.UniqueConstraint(fields=["collection", "name"], name="subset_unique_name")]

    def __str__(self) -> str:
        return f"{self.collection.name}/{self.name}"


class Document(models.Model):
    subset = models.ForeignKey(Subset, on_delete=models.CASCADE, related_name="documents")
    doc_id = models.CharField(max_length=200)
    title = models.TextField(blank=True)
    text = models.TextField()
    line = models.PositiveIntegerField(help_text="Line of corpus.jsonl it came from.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subset", "doc_id"], name="document_unique_id")]

    def __str__(self) -> str:
        return self.doc_id

    @property
    def full_text(self) -> str:
        """Title and text as BEIR models read them (title, a space, text)."""
        return f"{self.title} {self.text}".strip() if self.title else self.text


class Query(models.Model):
    subset = models.ForeignKey(Subset, on_delete=models.CASCADE, related_name="queries")
    query_id = models.CharField(max_length=200)
    text = models.TextField()
    instruction = models.TextField(blank=True)
    line = models.PositiveIntegerField(help_text="Line of queries.jsonl it came from.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subset", "query_id"], name="query_unique_id")]

    def __str__(self) -> str:
        return self.query_id


class Qrel(models.Model):
    """An original judgment of the collection (binary or graded), from ``qrels/<split>.tsv``."""

    subset = models.ForeignKey(Subset, on_delete=models.CASCADE, related_name="qrels")
    split = models.CharField(max_length=50)
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    relevance = models.FloatField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["split", "query", "document"], name="qrel_unique_pair")]
        indexes = [models.Index(fields=["subset", "split"])]

    def __str__(self) -> str:
        return f"{self.split}: {self.query_id} {self.document_id} = {self.relevance:g}"


class Ranking(Job):
    """One system's ranking of a collection's queries.

    Its status is the job layer's (hume/jobs/models.py): a BM25 ranking started from the page is a job a worker
    claims and keeps under a lease while it ranks (``actions.rank_bm25``); a split embedding ranking's status
    follows its chunks, which are jobs of their own (`RankingChunk`); imported rankings and rankings made by a
    command are written done, in one transaction with their entries."""

    class Method(models.TextChoices):
        IMPORTED = "imported", "imported TREC run"
        EMBEDDING = "embedding", "embedding model (exact cosine top-K)"
        BM25 = "bm25", "BM25 (bm25s)"
        RERANKED = "reranked", "reranker over another ranking's top-K"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="rankings")
    name = models.CharField(max_length=200)
    method = models.CharField(max_length=20, choices=Method.choices, default=Method.IMPORTED)
    tag = models.CharField(max_length=200, blank=True, help_text="The run tag of the TREC file (6th column).")
    base_ranking = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="reranked",
                                     help_text="For a reranked ranking: the ranking whose top-K it reorders.")
    depth = models.PositiveIntegerField(default=0, help_text="The longest list of a query in this ranking.")
    k = models.PositiveIntegerField(null=True, blank=True,
                                    help_text="For a ranking a worker writes: how many documents per query it keeps.")
    device = models.CharField(max_length=100, blank=True,
                              help_text="Where an embedding ranking was computed: cpu, cuda:0, mps (comma-separated "
                                        "when workers on several devices shared it); empty for imported and BM25 "
                                        "rankings.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection", "name"]
        constraints = [models.UniqueConstraint(fields=["collection", "name"], name="run_unique_name")]

    def __str__(self) -> str:
        return f"{self.collection.name}:{self.name}"


class RankingEntry(models.Model):
    ranking = models.ForeignKey(Ranking, on_delete=models.CASCADE, related_name="entries")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveIntegerField(help_text="1-based, after trec_eval's order: score down, doc id down.")
    score = models.FloatField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["ranking", "query", "document"], name="rankingentry_unique_doc")]
        indexes = [models.Index(fields=["ranking", "query", "rank"])]

    def __str__(self) -> str:
        return f"{self.ranking_id}: {self.query_id} #{self.rank} {self.document_id}"


class Pool(models.Model):
    """The judged pairs of one subset: the union of chosen rankings' top-``depth``, as items of ``task``."""

    subset = models.ForeignKey(Subset, on_delete=models.CASCADE, related_name="pools")
    task = models.OneToOneField(Task, on_delete=models.PROTECT, related_name="retrieval_pool")
    depth = models.PositiveIntegerField()
    rankings = models.ManyToManyField(Ranking, related_name="pools")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"pool of {self.subset} at depth {self.depth}"


class PoolUnit(models.Model):
    """One judging unit: a (query, document) pair, shown as one item with one document."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="units")
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="retrieval_unit")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    pair_id = models.CharField(max_length=64, help_text="sha256 of (query id, query text, doc id, doc text).")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["pool", "query", "document"], name="poolunit_unique_pair"),
                       models.UniqueConstraint(fields=["pool", "pair_id"], name="poolunit_unique_pair_id")]

    def __str__(self) -> str:
        return self.pair_id


class Evaluation(Job):
    """The stored scores of every ranking of a collection (rows of ``evaluation.Row.as_dict`` at k = 1…100),
    computed by a Celery task and keyed by a digest of what they were computed from. Its job state (status,
    claim, lease, attempts, error) is the job layer's (hume/jobs/models.py)."""

    collection = models.OneToOneField(Collection, on_delete=models.CASCADE, related_name="evaluation")
    digest = models.CharField(max_length=64, blank=True, help_text="sha256 of the rankings and judgments read.")
    thresholds = models.JSONField(default=dict, blank=True, help_text="Relevance threshold per judge name.")
    rows = models.JSONField(default=list, blank=True)
    judges = models.JSONField(default=dict, blank=True,
                              help_text="Per subset: judge–judge and judge–human correlations, α, distributions.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"evaluation of {self.collection.name} ({self.status})"


class RankingChunk(Job):
    """One slice of a split embedding ranking: a subset's documents [doc_start, doc_end) (in primary-key order)
    ranked for every query of the subset by one worker; the ranking's entries are the exact merge of its chunks'
    top-K (agreement/retrieval/split_rankings.py). A job of the job layer (hume/jobs/): claimed with SKIP LOCKED,
    its lease renewed while it ranks."""

    ranking = models.ForeignKey(Ranking, on_delete=models.CASCADE, related_name="chunks")
    subset = models.ForeignKey(Subset, on_delete=models.CASCADE, related_name="+")
    model = models.ForeignKey("model_runs.EmbeddingModel", on_delete=models.PROTECT, related_name="+")
    k = models.PositiveIntegerField()
    doc_start = models.PositiveIntegerField()
    doc_end = models.PositiveIntegerField()
    doc_ids = models.BinaryField(null=True, help_text="int64 (queries × k) document pks, best first.")
    scores = models.BinaryField(null=True, help_text="float32 (queries × k) cosines.")

    class Meta:
        ordering = ["ranking", "subset", "doc_start"]
        constraints = [models.UniqueConstraint(fields=["ranking", "subset", "doc_start"], name="ranking_chunk_once")]

    def __str__(self) -> str:
        return f"{self.ranking}: subset {self.subset_id} documents {self.doc_start}-{self.doc_end} ({self.status})"
