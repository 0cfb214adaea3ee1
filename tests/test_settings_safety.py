"""With DEBUG off the app refuses unsafe settings, and a safe production configuration passes check --deploy."""
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAFE_KEY = "k3J9-vQz8_Lp2Wm5Xr7Tn4Yb6Hc1Fd0Gs8Ja3Ke5Lu7Mi9No2Pq4Rs6Tu8Vw0Xy1Za"


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    inherited = {"SECRET_KEY", "ALLOWED_HOSTS", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE", "DATABASE_URL"}
    full_env = {k: v for k, v in os.environ.items() if k not in inherited}
    full_env.update(env)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=full_env,
                          capture_output=True, text=True, timeout=120)


def test_it_refuses_to_start_with_the_development_secret_key_when_debug_is_off() -> None:
    result = run_manage("check", DEBUG="false", ALLOWED_HOSTS="example.org")
    assert result.returncode != 0
    assert "SECRET_KEY is unsafe" in result.stderr


def test_it_refuses_to_start_without_allowed_hosts_when_debug_is_off() -> None:
    result = run_manage("check", DEBUG="false", SECRET_KEY=SAFE_KEY)
    assert result.returncode != 0
    assert "ALLOWED_HOSTS is empty" in result.stderr


def test_check_deploy_is_clean_with_production_settings(tmp_path: Path) -> None:
    """On a database that was never migrated too: schema generation must not query tables."""
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", HUME_DATA_DIR=str(tmp_path),
                        DEBUG="false", SECRET_KEY=SAFE_KEY, ALLOWED_HOSTS="hume.example.org")
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_the_settings_default_to_production_debug_off() -> None:
    """Nothing set but a safe key and a host: DEBUG is off (an annotator never sees a technical 500 page)."""
    code = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                            env={**{k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY")},
                                 "DJANGO_SETTINGS_MODULE": "hume.settings", "SECRET_KEY": SAFE_KEY,
                                 "ALLOWED_HOSTS": "hume.example.org"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_with_nothing_set_it_refuses_to_start_and_says_how_to_develop_locally() -> None:
    result = run_manage("check", DJANGO_SETTINGS_MODULE="hume.settings")
    assert result.returncode != 0
    assert "SECRET_KEY is unsafe for DEBUG=false (the default)" in result.stderr
    assert "DEBUG=true for local development" in result.stderr


def proxy_ssl_header(**env: str) -> str:
    code = "import django; django.setup(); from django.conf import settings; print(settings.SECURE_PROXY_SSL_HEADER)"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                            env={**{k: v for k, v in os.environ.items() if k not in ("DEBUG", "TRUSTED_PROXY_COUNT")},
                                 "DJANGO_SETTINGS_MODULE": "hume.settings", "SECRET_KEY": SAFE_KEY,
                                 "ALLOWED_HOSTS": "hume.example.org", "DEBUG": "false", **env})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_x_forwarded_proto_is_trusted_only_behind_a_configured_proxy() -> None:
    """Issue 23: with no proxy configured a client could claim https itself."""
    assert proxy_ssl_header() == "None"
    assert proxy_ssl_header(TRUSTED_PROXY_COUNT="0") == "None"
    assert proxy_ssl_header(TRUSTED_PROXY_COUNT="1") == "('HTTP_X_FORWARDED_PROTO', 'https')"
