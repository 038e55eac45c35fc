"""LLM settings come from one place for the CLI and the server: the environment, read by Settings.from_env,
with the CLI's flags over it. A bad value is a one-line error that names the variable."""

import anyio

import pytest
from click.testing import CliRunner
from mcp import Client

from tender.agents.reasoners.factory import llm_settings
from tender.answers.runs import RunStore
from tender.server.app import AppContext, build_server
from tender.cli import main
from tender.settings import BadSetting, Settings
from tests.llm_fake_server import FakeLLMServer, Hang
from tests.server_support import REQUIREMENT, ok, settings  # noqa: F401 (fixture)


def test_the_environment_sets_the_llm_timeout_calls_in_flight_cache_and_deadline():
    settings = Settings.from_env(
        {
            "TENDER_LLM_TIMEOUT": "5",
            "TENDER_LLM_IN_FLIGHT": "1",
            "TENDER_LLM_CACHE": "off",
            "TENDER_DEADLINE": "30",
            "TENDER_HOME": "/tmp/tender-test-home",
        }
    )

    assert (settings.llm_timeout_s, settings.llm_in_flight, settings.llm_cache, settings.deadline_s) == (
        5,
        1,
        False,
        30,
    )
    defaults = Settings.from_env({"TENDER_HOME": "/tmp/tender-test-home"})
    assert (defaults.llm_timeout_s, defaults.llm_in_flight, defaults.llm_cache, defaults.deadline_s) == (
        60,
        4,
        True,
        None,
    )


@pytest.mark.parametrize(
    "name, value",
    [
        ("TENDER_LLM_TIMEOUT", "soon"),
        ("TENDER_LLM_TIMEOUT", "0"),
        ("TENDER_LLM_IN_FLIGHT", "1.5"),
        ("TENDER_LLM_CACHE", "maybe"),
        ("TENDER_DEADLINE", "-1"),
    ],
)
def test_a_bad_value_names_the_variable(name, value):
    with pytest.raises(BadSetting, match=f"{name}='{value}' is not valid"):
        Settings.from_env({name: value, "TENDER_HOME": "/tmp/tender-test-home"})


@pytest.mark.parametrize(
    "name, value",
    [
        # Not a number of seconds: nan compares False with any bound, inf and 1e309 (inf) wait for ever.
        ("TENDER_LLM_TIMEOUT", "nan"),
        ("TENDER_LLM_TIMEOUT", "inf"),
        ("TENDER_LLM_TIMEOUT", "1e309"),
        ("TENDER_LLM_TIMEOUT", "86400"),
        ("TENDER_DEADLINE", "nan"),
        ("TENDER_DEADLINE", "-inf"),
        ("TENDER_LLM_IN_FLIGHT", "100000"),
    ],
)
def test_a_non_finite_or_out_of_range_value_is_refused_saying_the_range(name, value):
    with pytest.raises(BadSetting, match=f"{name}='{value}' is not valid; set it to .* from .* to "):
        Settings.from_env({name: value, "TENDER_HOME": "/tmp/tender-test-home"})


@pytest.mark.parametrize("name, value", [("TENDER_LLM_TIMEOUT", "nan"), ("TENDER_DEADLINE", "nan")])
def test_the_cli_refuses_a_non_finite_setting_in_one_line_naming_it(catalog_path, tmp_path, name, value):
    env = {"TENDER_CATALOG": str(catalog_path), "TENDER_RUNS": str(tmp_path / "runs.db"), name: value}

    result = CliRunner().invoke(main, ["recommend", REQUIREMENT], env=env | {"TENDER_EMBEDDING_MODEL": "hashing"})

    assert result.exit_code == 2  # a setting the user set: input to fix
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {name}='nan' is not valid")


@pytest.mark.parametrize("flag", ["--llm-timeout", "--deadline"])
def test_the_cli_refuses_a_non_finite_flag(catalog_path, flag):
    result = CliRunner().invoke(
        main, ["recommend", REQUIREMENT, flag, "nan"], env={"TENDER_CATALOG": str(catalog_path)}
    )

    assert result.exit_code == 2 and "'nan' is not a number of seconds" in result.stderr


def test_cli_flags_win_over_the_environment():
    settings = Settings(llm_base_url="http://h/v1", llm_model="m", llm_timeout_s=5, llm_in_flight=1, llm_cache=False)

    assert (llm_settings(settings).timeout_s, llm_settings(settings).max_in_flight) == (5, 1)
    flagged = llm_settings(settings, timeout_s=9, max_in_flight=3, model="other")
    assert (flagged.timeout_s, flagged.max_in_flight, flagged.model, flagged.use_cache) == (9, 3, "other", False)


def test_the_server_builds_its_reasoners_from_the_same_settings(catalog, tmp_path):
    settings = Settings(
        catalog_path=tmp_path / "catalog.db",
        llm_base_url="http://127.0.0.1:9/v1",
        llm_model="m",
        llm_timeout_s=5,
        llm_in_flight=1,
        llm_cache=False,
    )
    app = AppContext(settings=settings, runs=RunStore(tmp_path / "runs.db"), catalog=catalog)

    reasoner = app.tender("llm", "llm").contractor_reasoner

    assert (reasoner.timeout_s, reasoner.max_in_flight, reasoner.cache) == (5, 1, None)


async def test_a_hanging_endpoint_costs_the_server_its_configured_timeout(settings):
    # The endpoint hangs for 30 s: the configured timeout (1 s) hangs up on it, the default (60 s) would wait it out.
    with FakeLLMServer(respond=lambda body: Hang(30)) as fake:
        configured = Settings(
            catalog_path=settings.catalog_path,
            runs_path=settings.runs_path,
            embedding_model="hashing",
            llm_base_url=fake.url,
            llm_model="fake",
            llm_timeout_s=1,
            llm_cache=False,
            manager_backend="llm",
        )
        async with Client(build_server(configured)) as client:
            plan = ok(await client.call_tool("recommend_apis", {"requirement": REQUIREMENT}))
        assert await anyio.to_thread.run_sync(fake.settled)

    assert any("no answer within 1 s" in note for note in plan["notes"])  # the server read TENDER_LLM_TIMEOUT
    assert fake.abandoned >= 1 and fake.outlasted == 0


def test_the_home_is_the_platforms_data_folder_unless_named_and_a_blank_value_is_unset(tmp_path):
    from tender.settings import platform_home

    plain = Settings.from_env(
        {"TENDER_HOME": "  ", "TENDER_LLM_TIMEOUT": "", "TENDER_DEADLINE": " ", "TENDER_SAMPLING": " "}
    )
    assert plain.home == platform_home() and plain.catalog_path == platform_home() / "catalog.db"
    assert (plain.llm_timeout_s, plain.deadline_s, plain.sampling) == (60, None, True)

    named = Settings.from_env({"TENDER_HOME": str(tmp_path), "TENDER_CATALOG": str(tmp_path / "c" / "tools.db")})
    assert named.home == tmp_path and named.runs_path == tmp_path / "c" / "runs.db"  # runs beside the catalogue


def test_the_openai_names_are_read_where_tenders_are_unset():
    both = Settings.from_env({"TENDER_LLM_MODEL": "mine", "OPENAI_MODEL": "theirs", "OPENAI_API_KEY": "sk-Qsecret"})
    assert (both.llm_model, both.llm_api_key) == ("mine", "sk-Qsecret") and "Qsecret" not in repr(both)
