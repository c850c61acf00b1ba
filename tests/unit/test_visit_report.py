"""``publisher-gateway visits``' report (cli/visit_report.py) on fake reads: each section, the CSV's
columns, text from outside kept harmless. tests/services/test_cli.py runs the command itself."""

from __future__ import annotations

import csv
import io
from datetime import date, timedelta

import pytest

from publisher.cli import main, visit_report
from publisher.content import books
from publisher.storage import visit_counts
from publisher.storage.visit_counts import DayCount, KeyCount
from publisher.web import exports

TODAY = date(2026, 11, 27)
BOOK = books.BOOKS[0]
ESCAPE = "\x1b]0;owned\x07"


@pytest.fixture
def reads(monkeypatch) -> list[tuple]:
    """Fake counts: 3 visitors a day, 1 bot request a day, a book page of 4 visitors and 2 presses."""
    asked: list[tuple] = []

    def daily(kind, since, until, key="", db_url=None):
        asked.append(("daily", kind, since, until, key))
        days = [since + timedelta(days=n) for n in range((until - since).days + 1)]
        if kind == "page":
            return [DayCount(day, 6 if key == f"/books/{BOOK.slug}" and day == until else 0, 4) for day in days][-1:]
        return [DayCount(day, 5 if kind == "site" else 1, 3 if kind == "site" else 0) for day in days]

    def top(kind, since, until, limit=10, db_url=None):
        asked.append(("top", kind, since, until, limit))
        return {
            "page": [KeyCount("/", 40, 20), KeyCount(f"/books/{BOOK.slug}", 6, 4)],
            "source": [KeyCount("Instagram", 9, 7), KeyCount(f"=HYPERLINK(evil){ESCAPE}", 1, 1)],
            "campaign": [KeyCount("newsletter / email / launch", 3, 3)],
            "buy": [KeyCount(f"{BOOK.slug} www.amazon.com", 2, 2)],
        }[kind]

    monkeypatch.setattr(visit_counts, "daily", daily)
    monkeypatch.setattr(visit_counts, "top", top)
    return asked


def test_the_text_shows_each_day_the_tops_bots_buy_presses_and_each_books_visits_to_presses(reads):
    out = io.StringIO()
    visit_report.write_text(visit_report.read(7, TODAY), out)
    text = out.getvalue()

    assert text.startswith("Visits from 2026-11-21 to 2026-11-27 (UTC days; today is still counting): ")
    assert "21 visitors (each counted once a day), 35 page views." in text
    assert "  2026-11-27         3         5" in text.splitlines()
    assert "Top sources, the sites visits came from (views, visitors):" in text
    assert "         9         7  Instagram" in text.splitlines()
    assert "         3         3  newsletter / email / launch" in text.splitlines()
    assert "Bots (counted apart, never as visitors): 7 requests." in text
    assert f"         2         2  {BOOK.title} at www.amazon.com" in text.splitlines()
    assert f"  {BOOK.title}: 4 visitors (6 views); 2 presses" in text.splitlines()  # no rate: Home's count too
    assert f"  {books.BOOKS[1].title}: 4 visitors (0 views); 0 presses" in text.splitlines()
    assert "\x1b" not in text and "\\x1b]0;owned\\x07" in text  # a Referer's escape is shown, never run


def test_the_csv_has_one_row_per_day_and_per_key_and_never_a_formula(reads):
    out = io.StringIO()
    exports.write_visits_csv(visit_report.csv_rows(visit_report.read(2, TODAY)), out)
    rows = list(csv.reader(io.StringIO(out.getvalue())))

    assert rows[0] == ["section", "day", "key", "views", "visitors"]
    assert ["site", "2026-11-27", "", "5", "3"] in rows
    assert ["bot", "2026-11-26", "", "1", "0"] in rows
    assert ["buy", "", f"{BOOK.slug} www.amazon.com", "2", "2"] in rows
    assert ["book_page", "", BOOK.slug, "6", "4"] in rows
    assert ["source", "", f"'=HYPERLINK(evil){ESCAPE}", "1", "1"] in rows  # as the other exports do
    assert sum(row[0] == "site" for row in rows) == 2


@pytest.mark.parametrize("days", ["0", "731", "-3", "seven", "1.5", ""])
def test_days_outside_1_to_730_are_refused_naming_the_option_and_30_is_the_default(days, capsys):
    with pytest.raises(SystemExit) as exited:
        main.command_line().parse_args(["visits", "--days", days])
    assert exited.value.code == main.EXIT_USAGE
    assert f"argument --days: {days!r} is not a number of days from 1 to 730" in capsys.readouterr().err
    assert [main.command_line().parse_args(["visits", *given]).days for given in ([], ["--days", "1"])] == [30, 1]
    assert main.command_line().parse_args(["visits", "--days", "730"]).days == 730


def test_counting_off_says_so_and_exits_0(monkeypatch, capsys, reads):
    monkeypatch.setenv("PUBLISHER_VISITS", "off")
    monkeypatch.setenv("PUBLISHER_GATEWAY_URL", "")
    assert main.run(["visits", "--csv"]) == main.EXIT_OK
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "counting is off (PUBLISHER_VISITS=off)" in captured.err
    assert reads == []  # nothing read
