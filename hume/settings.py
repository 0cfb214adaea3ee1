"""One settings module, read from the environment.

The defaults are production's: DEBUG is off unless DEBUG=true is set (scripts/run and the tests set it for the
embedded mode: SQLite, a local Redis), and with DEBUG off the app refuses to start on an unsafe SECRET_KEY
or an empty ALLOWED_HOSTS, so a deployment cannot silently run with development values or show technical
error pages.
"""
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


DEBUG = env_bool("DEBUG", False)
DEV_SECRET_KEY = "django-insecure-embedded-development-key-change-me"
SECRET_KEY = os.environ.get("SECRET_KEY", DEV_SECRET_KEY)
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "").split(",") if h.strip()]

if DEBUG:
    ALLOWED_HOSTS = ALLOWED_HOSTS or ["localhost", "127.0.0.1", "[::1]", "testserver"]
else:
    if SECRET_KEY == DEV_SECRET_KEY or SECRET_KEY.startswith("django-insecure") or len(SECRET_KEY) < 50 \
            or len(set(SECRET_KEY)) < 5:
        raise ImproperlyConfigured(
            "SECRET_KEY is unsafe for DEBUG=false (the default): set a random value of at least 50 characters "
            "(python -c 'import secrets; print(secrets.token_urlsafe(64))'), or DEBUG=true for local development."
        )
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("ALLOWED_HOSTS is empty with DEBUG=false (the default): list the host names "
                                   "to serve, or set DEBUG=true for local development.")

INSTALLED_APPS = [
    # first, so that its createsuperuser (password validators under --noinput too) replaces Django's
    "hume",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_htmx",
    "csp",
    "axes",
    "drf_spectacular_sidecar",
    "tasks_app",
    "annotation",
    "agreement",
    "agreement.model_runs",
    "agreement.retrieval",
    "agreement.sage",
    "agreement.escalation",
]

MIDDLEWARE = [
    # first, so every response carries the policy: also the 400 that CommonMiddleware's DisallowedHost becomes
    # below it, and whitenoise's static files (issue 23, item 9)
    "csp.middleware.CSPMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "hume.upload_limit.UploadSizeLimit",  # before anything reads the body (the CSRF check does)
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "hume.broker_down.BrokerDownAnswers",  # a job stored with the broker down: "queued", never a 500 (issue 35)
    "axes.middleware.AxesMiddleware",  # last, as axes asks
]

ROOT_URLCONF = "hume.urls"
WSGI_APPLICATION = "hume.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "OPTIONS": {
            # Django's default loaders, plus the kinds' own folders (kinds/<name>/templates/, kinds/template_loader.py)
            "loaders": [("django.template.loaders.cached.Loader", [
                "django.template.loaders.filesystem.Loader",
                "django.template.loaders.app_directories.Loader",
                "kinds.template_loader.Loader",
            ])],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "hume.navigation.sections",
            ],
        },
    },
]

DATA_DIR = Path(os.environ.get("HUME_DATA_DIR", BASE_DIR / "var"))
DATA_DIR.mkdir(parents=True, exist_ok=True)
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{DATA_DIR / 'hume.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the web process and the worker share the embedded database without
    # "database is locked" errors reaching a user; IMMEDIATE transactions take the write lock up front.
    # SQLITE_BUSY_TIMEOUT: seconds a write waits for the lock before "database is locked"; the participant's
    # pages then try again (hume/sqlite_busy.py, also the session store below).
    DATABASES["default"]["OPTIONS"] = {
        "timeout": float(os.environ.get("SQLITE_BUSY_TIMEOUT", "30")),
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    SESSION_ENGINE = "hume.sqlite_busy"
else:
    SESSION_ENGINE = "hume.sessions"  # Django's database store, a new key checked by its INSERT alone
    # The annotator loop's statements run on server-binding cursors (annotation/core/rawsql.py) that psycopg prepares
    # after this many runs on a connection, and PostgreSQL keeps one generic plan for each: left to choose, it
    # re-planned the next-item and progress statements on every call (1 ms each, more than running them).
    # Only prepared statements have plans to keep; Django's own cursors bind on the client and never prepare.
    # Empty turns it off (e.g. behind PgBouncer < 1.21 in transaction mode, which cannot keep them).
    _prepare = os.environ.get("DB_PREPARE_THRESHOLD", "5").strip()
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    _options["prepare_threshold"] = int(_prepare) if _prepare else None
    if _prepare:
        _options["options"] = f"{_options.get('options', '')} -c plan_cache_mode=force_generic_plan".strip()
    # No JIT compilation: a generic plan's cost is estimated for an average annotator, and where a few have
    # answered a lot (an earlier study in the same database) it crossed jit_above_cost, so PostgreSQL compiled
    # the progress statement on every request: 30-50 ms each, for a statement that runs in 1 ms. The app's
    # queries are short lookups and bulk reads of plain columns, which JIT does not speed up.
    _options["options"] = f"{_options.get('options', '')} -c jit=off".strip()

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Django's default finders, plus the kinds' own folders (kinds/<name>/static/ as kinds/<name>/, kinds/static_finder.py)
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "kinds.static_finder.KindStaticFinder",
]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
WHITENOISE_USE_FINDERS = DEBUG  # serve static/ straight from the tree in development and tests
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Uploads: datasets can be large; they stream to a temporary file rather than memory.
# Uploads (dataset, annotation and collection imports) over this are answered 413 before the body is read
# (hume/upload_limit.py); bigger files go through the management commands. The MTEB results import has its own.
MAX_UPLOAD_BYTES = int(os.environ.get("MAX_UPLOAD_BYTES", str(100 * 1024 * 1024)))
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
MAX_IMPORT_LINE_BYTES = int(os.environ.get("MAX_IMPORT_LINE_BYTES", str(1024 * 1024)))
# A dataset upload bigger than this is stored and imported by a worker (tasks_app/import_jobs.py) instead of
# inside the web request (issue 23: a 383 MB import ran into gunicorn's timeout). The folder must be shared by
# the web processes and the workers (one machine: the default under HUME_DATA_DIR).
IMPORT_IN_BACKGROUND_BYTES = int(os.environ.get("IMPORT_IN_BACKGROUND_BYTES", str(5 * 1024 * 1024)))
IMPORT_SPOOL_DIR = Path(os.environ.get("IMPORT_SPOOL_DIR", DATA_DIR / "imports"))

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = REDIS_URL
# kombu's Redis transport, kept from killing the worker when Redis drops under load (issue 23; hume/broker.py).
CELERY_BROKER_TRANSPORT = "hume.broker:Transport"
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A Redis that does not answer a connection (its machine down, a firewall) costs a send at most this long, not the
# operating system's minutes: a web request submitting a job answers "queued, the broker is down" at once, and the
# job's message waits in the job layer's outbox (hume/jobs/outbox.py; issue 35, item 5). A refused connection (Redis
# stopped) fails at once whatever this is.
BROKER_CONNECT_TIMEOUT = float(os.environ.get("BROKER_CONNECT_TIMEOUT", "2"))
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600, "socket_connect_timeout": BROKER_CONNECT_TIMEOUT}
CELERY_BROKER_CONNECTION_TIMEOUT = BROKER_CONNECT_TIMEOUT
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = BROKER_CONNECT_TIMEOUT
# Two queues: model work (encoding, scoring model runs, SAGE, split retrieval chunks) goes to `models`, everything
# else to the default `celery`. A worker started without -Q takes both (the embedded default: one machine, as
# before); `celery -A hume worker -Q models` on a GPU machine takes the model work, `-Q celery` the rest
# (docs/models-in-app.md, "GPU workers").
CELERY_TASK_DEFAULT_QUEUE = "celery"
MODEL_QUEUE = "models"
CELERY_TASK_QUEUES = {CELERY_TASK_DEFAULT_QUEUE: {}, MODEL_QUEUE: {}}
MODEL_TASKS = ("model_runs.embed_chunk", "model_runs.score_run", "retrieval.embedding_chunk", "sage.run_study")
CELERY_TASK_ROUTES = {name: {"queue": MODEL_QUEUE} for name in MODEL_TASKS}

API_MAX_PAGE_SIZE = int(os.environ.get("API_MAX_PAGE_SIZE", "1000"))  # rows per API page at most
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # token first: DRF answers a failed authentication with the first class's challenge, so 401 with
        # `WWW-Authenticate: Token` (session authentication has no challenge and gave 403)
        "annotation.authentication.TokenAuthentication",  # DRF's, in one prepared statement
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["hume.parsers.JSONBodyParser", "rest_framework.parsers.FormParser",
                               "rest_framework.parsers.MultiPartParser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "hume.pagination.CappedLimitOffsetPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "HUME annotation platform API",
    "DESCRIPTION": "Import datasets, annotate, and read agreement reports.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema and docs are for signed-in people and token holders only; the token scheme comes first so an
    # anonymous request is answered 401 with `WWW-Authenticate: Token`.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SERVE_AUTHENTICATION": ["annotation.authentication.TokenAuthentication",
                             "rest_framework.authentication.SessionAuthentication"],
    "ENUM_NAME_OVERRIDES": {
        "TaskKindEnum": "tasks_app.core.kinds.KIND_CHOICES",
        "AnnotatorAgentEnum": "annotation.models.Annotator.Agent",
        "ResultEntryAgentEnum": "agreement.results.models.ResultModel.Agent",
    },
}

if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    # X-Forwarded-Proto says "https" only when a reverse proxy set it: trusted only when TRUSTED_PROXY_COUNT says
    # there is one (below), since a client talking to the app directly could send it itself (issue 23)
    if int(os.environ.get("TRUSTED_PROXY_COUNT", "0")) > 0:
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_TRUSTED_ORIGINS = [o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"no_403_traceback": {"()": "hume.logs.NoTracebackForPermissionDenied"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["no_403_traceback"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
    # Django's own console handler (DEBUG only) would print each django.* line a second time beside the root's
    "loggers": {"django": {"handlers": [], "level": os.environ.get("LOG_LEVEL", "WARNING"), "propagate": True}},
}

# LLM annotator runs (annotation/llm/run_executor.py) are jobs of the job layer (JOB_LEASE_SECONDS below). A worker
# executes a run for at most LLM_SLICE_SECONDS before handing it back to the queue (fair to other runs,
# quick warm shutdowns).
LLM_SLICE_SECONDS = float(os.environ.get("LLM_SLICE_SECONDS", "120"))

# Model runs (agreement/model_runs): chunks are jobs of the job layer (JOB_LEASE_SECONDS, JOB_MAX_ATTEMPTS below).
# Texts per model-run chunk, fixed when a run starts: 512 is a few seconds of MiniLM on one CPU core, so leases
# stay short; where GPU workers take the models queue, thousands (e.g. 8192) spare a GPU the per-chunk work.
MODEL_RUN_CHUNK_TEXTS = int(os.environ.get("MODEL_RUN_CHUNK_TEXTS", "512"))
# Texts per slice of the embedding cache (agreement/model_runs/embedding_store.py): looked up, encoded and written
# as one row at a time; a killed run keeps every slice it finished.
MODEL_CACHE_SLICE_TEXTS = int(os.environ.get("MODEL_CACHE_SLICE_TEXTS", "2048"))
# The only folders model folders may be in (agreement/model_runs/folders.py): a list separated by the OS's path
# separator (":" on Linux). The model shipped with HUME is always allowed.
MODEL_DIRS = [d for d in os.environ.get("MODEL_DIRS", str(DATA_DIR / "models")).split(os.pathsep) if d.strip()]
# Where models run (agreement/model_runs/device.py): auto = the first CUDA GPU torch sees, else MPS, else the CPU;
# or cpu, cuda, cuda:N, mps (a worker without that device refuses model work with an error naming this setting).
# Half precision applies on accelerators only; MODEL_BATCH_SIZES sets texts per forward pass by device type
# (a device type not listed uses each model's own batch size).
MODEL_DEVICE = os.environ.get("MODEL_DEVICE", "auto")
MODEL_HALF_PRECISION = env_bool("MODEL_HALF_PRECISION", False)
MODEL_BATCH_SIZES = os.environ.get("MODEL_BATCH_SIZES", "cuda=512")

# Hardening (issue 14): login lockout, API authentication throttling, endpoint policy, CSP.
AUTHENTICATION_BACKENDS = ["hume.lockout.LockoutBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "10"))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("LOGIN_LOCK_MINUTES", "15")))
# An account is locked from the address that failed, not everywhere: a stranger cannot lock the admin out from
# elsewhere, nor one person lock out everyone behind a shared address (issue 23). Guessing across many accounts
# from one address is left to the password validators (common and short passwords are refused).
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))  # reverse proxies in front of the app
AXES_CLIENT_IP_CALLABLE = "hume.lockout.client_address"
THROTTLE_CACHE = "throttle"
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # shared by every web process, so a limit holds across gunicorn workers
    # a Redis that hangs costs a request at most a second per call; one that is down lets it through
    # (hume/lockout.py)
    THROTTLE_CACHE: {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                     "KEY_PREFIX": "hume-throttle",
                     "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1}},
}
# Arrivals through a crowd study link per address per minute (docs/crowd.md); a NAT of many participants needs more.
CROWD_ARRIVALS_PER_MINUTE = int(os.environ.get("CROWD_ARRIVALS_PER_MINUTE", "30"))
# The debounce window of the report of a task with an open crowd study (agreement/signals.py)
CROWD_REPORT_DEBOUNCE_SECONDS = float(os.environ.get("CROWD_REPORT_DEBOUNCE_SECONDS", "60"))
# The crowd the embedded default (SQLite, runserver) was measured to serve: participants arriving within a minute,
# reading 3-10 s per item, quota 5, with no server error and every one completed, on a quiet 2-core machine
# (bench/bench_crowd.py --backend sqlite; docs/crowd.md, "How large a crowd the embedded default serves"). The
# new-study-link page states it when the app runs on SQLite.
CROWD_EMBEDDED_MEASURED_PARTICIPANTS = int(os.environ.get("CROWD_EMBEDDED_MEASURED_PARTICIPANTS", "300"))
# Tries again of a participant's page that met "database is locked" on SQLite (hume/sqlite_busy.py)
SQLITE_LOCKED_RETRIES = int(os.environ.get("SQLITE_LOCKED_RETRIES", "6"))
API_AUTH_FAILURE_LIMIT = int(os.environ.get("API_AUTH_FAILURE_LIMIT", "30"))
API_AUTH_FAILURE_WINDOW = int(os.environ.get("API_AUTH_FAILURE_WINDOW", "300"))

# Outgoing requests to LLM and embedding endpoints (hume/lib/endpoint_policy.py) may not reach loopback,
# private, link-local or reserved addresses, except the networks listed here, e.g. "127.0.0.0/8,::1/128" for
# a local inference server (the run command's demo sets that).
ENDPOINT_ALLOWED_NETWORKS = [n.strip() for n in os.environ.get("ENDPOINT_ALLOWED_NETWORKS", "").split(",")
                             if n.strip()]

# /api/docs/ works offline: Swagger UI is served from the project, not a CDN.
SPECTACULAR_SETTINGS.update({"SWAGGER_UI_DIST": "SIDECAR", "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
                             "REDOC_DIST": "SIDECAR"})

# Content-Security-Policy on every response (django-csp): nothing inline, nothing from elsewhere.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    },
}

# Cohen's κ per annotator pair (measures/pairwise_kappa.py): a pair sharing fewer items is shown as excluded
# and left out of the mean κ (docs/metrics.md).
KAPPA_MIN_SHARED_ITEMS = int(os.environ.get("KAPPA_MIN_SHARED_ITEMS", "10"))
# Annotator models in reports (measures/annotator_models.py, docs/reports.md): every model is fitted on the
# whole task when its human answers number at most this (GLAD and MACE take seconds per thousand answers);
# 0 leaves the report's annotator_models block out. `report TASK --aggregation X` fits X whatever the size.
ANNOTATOR_MODELS_MAX_ANSWERS = int(os.environ.get("ANNOTATOR_MODELS_MAX_ANSWERS", "5000"))
# The job layer (hume/jobs/, docs/architecture.md "The job layer"): every background job's claim holds it for
# JOB_LEASE_SECONDS; its worker renews the lease every third of that while it works, so a job whose worker was
# killed is free again, and re-queued by the beat below, within about a minute. A job claimed JOB_MAX_ATTEMPTS
# times without finishing (each worker killed, out of memory or hung) fails with that reason.
JOB_LEASE_SECONDS = float(os.environ.get("JOB_LEASE_SECONDS", "60"))
JOB_MAX_ATTEMPTS = int(os.environ.get("JOB_MAX_ATTEMPTS", "3"))
# Every worker runs Celery beat embedded (`celery worker -B`, scripts/run): each DEAD_RUN_CHECK_SECONDS it re-queues
# the jobs of every registered type (hume/jobs/registry.py) whose lease lapsed, so a run whose worker died is
# taken over without waiting for a page's poll or a worker's start. In-memory schedule (celery.beat:Scheduler):
# nothing to persist, no file shared between workers; several workers checking at once is harmless (the claim
# decides).
DEAD_RUN_CHECK_SECONDS = float(os.environ.get("DEAD_RUN_CHECK_SECONDS", "15"))
CELERY_BEAT_SCHEDULER = "celery.beat:Scheduler"
CELERY_BEAT_SCHEDULE = {
    "requeue-lapsed-jobs": {"task": "jobs.requeue_lapsed", "schedule": DEAD_RUN_CHECK_SECONDS},
}
