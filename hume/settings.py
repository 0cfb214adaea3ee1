"""One settings module, read from the environment.

Embedded defaults (SQLite, a local Redis, DEBUG on) need no configuration; with DEBUG off the app refuses
to start on an unsafe SECRET_KEY or an empty ALLOWED_HOSTS, so a production deployment cannot silently run
with development values.
"""
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


DEBUG = env_bool("DEBUG", True)
DEV_SECRET_KEY = "django-insecure-embedded-development-key-change-me"
SECRET_KEY = os.environ.get("SECRET_KEY", DEV_SECRET_KEY)
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "").split(",") if h.strip()]

if DEBUG:
    ALLOWED_HOSTS = ALLOWED_HOSTS or ["localhost", "127.0.0.1", "[::1]", "testserver"]
else:
    if SECRET_KEY == DEV_SECRET_KEY or SECRET_KEY.startswith("django-insecure") or len(SECRET_KEY) < 50 \
            or len(set(SECRET_KEY)) < 5:
        raise ImproperlyConfigured(
            "SECRET_KEY is unsafe for DEBUG=false: set a random value of at least 50 characters "
            "(python -c 'import secrets; print(secrets.token_urlsafe(64))')."
        )
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("ALLOWED_HOSTS is empty with DEBUG=false: list the host names to serve.")

INSTALLED_APPS = [
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
    "tasks_app",
    "annotation",
    "agreement",
    "agreement.model_runs",
    "agreement.retrieval",
    "agreement.sage_page",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "hume.urls"
WSGI_APPLICATION = "hume.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
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
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
else:
    # The annotator loop's statements run on server-binding cursors (annotation/rawsql.py) that psycopg prepares
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
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
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
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
MAX_IMPORT_LINE_BYTES = int(os.environ.get("MAX_IMPORT_LINE_BYTES", str(1024 * 1024)))

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "annotation.authentication.TokenAuthentication",  # DRF's, in one prepared statement
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "HUME annotation platform API",
    "DESCRIPTION": "Import datasets, annotate, and read agreement reports.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "ENUM_NAME_OVERRIDES": {
        "TaskKindEnum": "tasks_app.kinds.KIND_CHOICES",
        "AnnotatorKindEnum": "annotation.models.Annotator.Kind",
        "ResultEntryKindEnum": "agreement.results.models.ResultModel.Kind",
    },
}

if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_TRUSTED_ORIGINS = [o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

# LLM annotator runs (annotation/llm/runs.py): the worker executing a run heart-beats this often; a run whose
# heartbeat is three intervals old is taken over by another worker, with its in-flight requests. A worker
# executes a run for at most LLM_SLICE_SECONDS before handing it back to the queue (fair to other runs,
# quick warm shutdowns).
LLM_HEARTBEAT_SECONDS = float(os.environ.get("LLM_HEARTBEAT_SECONDS", "5"))
LLM_SLICE_SECONDS = float(os.environ.get("LLM_SLICE_SECONDS", "120"))

# Model runs (agreement/model_runs): a chunk's claim lasts this long; a chunk whose worker died is taken over
# by another worker once it has run out.
MODEL_RUN_LEASE_SECONDS = float(os.environ.get("MODEL_RUN_LEASE_SECONDS", "300"))
