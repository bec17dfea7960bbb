"""A person answers an escalated test from the real Temporal Web UI, in a
real (headless) browser: the run's page names the test waiting for them, with
a link to its workflow and what to send; its details say what to type; a typo
is refused by the "Send an Update" dialog with a message that says what is
allowed, and ``"skip"`` goes through the "Send a Signal" dialog; the test ends
SKIPPED and the run completes. Once the worker is gone too, the pages still
say so (the final details are in each workflow's memo). Screenshots of each
step are kept (see ``screenshots``)."""

from __future__ import annotations

import asyncio
import re
import urllib.parse
import uuid

try:
    from playwright.async_api import Page, expect
except ImportError:  # the browser_page fixture says how to install it (and fails under CI)
    Page = expect = None

from greenloop.domain.states import FixState
from greenloop.reports.record import FixOneTestResult, RunSummary
from greenloop.worker import build_worker
from greenloop.workflows.control import ANSWER_EXAMPLES
from greenloop.workflows.fix_one_test import FixOneTestWorkflow
from greenloop.workflows.fix_suite import FixSuiteWorkflow, child_id
from greenloop.workflows.waiting import WAITING_QUERY
from tests.workflows.conftest import DEMO, fix_request, wait_for_view

TARGET = "tests/test_cart.py::test_discount"


async def listed(client, query: str, expected: list[str], timeout_s: float = 15) -> list[str]:
    """The ids a visibility query lists, once they are ``expected`` (visibility lags a little)."""
    for _ in range(int(timeout_s / 0.5)):
        ids = [w.id async for w in client.list_workflows(query)]
        if ids == expected:
            break
        await asyncio.sleep(0.5)
    return ids


async def run_knows_it_waits(handle) -> None:
    """Wait until the run has heard that its test waits (the test's workflow tells it by a signal)."""
    for _ in range(100):
        if any(v.waiting for v in await handle.query(FixSuiteWorkflow.status)):
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the run never heard that its test waits for a person")


async def open_metadata(page: Page, url: str) -> None:
    """A workflow's page, on its "User Metadata" tab (summary, details, current details)."""
    await page.goto(url, wait_until="load")
    await page.get_by_role("link", name="User Metadata").or_(page.get_by_role("tab", name="User Metadata")).first.click()
    await expect(page.get_by_text("Current Details")).to_be_visible()


def summary(page: Page):
    """The summary the Web UI shows (rendered as Markdown in a frame of its own)."""
    return page.frame_locator("iframe").first.locator("body")


def current_details(page: Page):
    """The current details the Web UI shows (the last of the metadata frames)."""
    return page.frame_locator("iframe").last.locator("body")


async def open_memo(page: Page, url: str):
    """A workflow's page, on its "Memo" tab: the final details it wrote before it completed
    (what the Web UI shows once no worker is left to answer the current details' query)."""
    await page.goto(url, wait_until="load")
    await page.get_by_role("link", name="Memo").or_(page.get_by_role("tab", name="Memo")).first.click()
    memo = page.get_by_role("textbox", name="Memo")
    await expect(memo).to_be_visible()
    return memo


async def open_dialog(page: Page, action: str, handler: str):
    """More Actions → ``action`` ("Send a Signal" / "Send an Update"), ``handler`` chosen;
    the dialog and its Data editor."""
    await page.get_by_role("button", name="More Actions").click()
    await page.get_by_role("menuitem", name=action).click()
    dialog = page.get_by_role("dialog").filter(has_text=action)
    await expect(dialog).to_be_visible()
    await dialog.locator("[data-testid$='-select-button']").click()
    await dialog.get_by_role("option", name=handler, exact=True).click()
    return dialog, dialog.get_by_role("textbox", name="Data")


async def test_skip_an_escalated_test_from_the_web_ui(webui_server, webui_client, browser_page, demo_repo,
                                                       scripted, tmp_path, screenshots):
    page, client = browser_page, webui_client
    scripted(DEMO.parent / "scenarios" / "unfixable.yaml")
    queue = f"q-{uuid.uuid4().hex[:6]}"
    run_id = f"webui-{uuid.uuid4().hex[:6]}"
    request = fix_request(demo_repo, tmp_path, select=[TARGET], max_attempts=1)
    test_wf = child_id(run_id, TARGET)
    base = f"{webui_server.ui}/namespaces/default/workflows"

    async with build_worker(client, task_queue=queue):
        handle = await client.start_workflow(FixSuiteWorkflow.run, request, id=run_id, task_queue=queue,
                                             static_summary=f"fix failing tests of {request.repo}")
        await wait_for_view(client, test_wf, lambda v: v.state == FixState.ESCALATED, "ESCALATED")
        await run_knows_it_waits(handle)

        # 1. The run: its details count the test ESCALATED and name it as waiting for a person,
        # with a link to its workflow and what to send.
        await open_metadata(page, f"{base}/{run_id}")
        await expect(summary(page)).to_contain_text(f"fix failing tests of {request.repo}")
        details = current_details(page)
        await expect(details).to_contain_text(f"fixing {TARGET}")
        await expect(details).to_contain_text("tests: 1 ESCALATED")
        await expect(details).to_contain_text("waiting for a person (1):")
        await expect(details).to_contain_text(f"{TARGET} (workflow {test_wf}, attempt 1): Send Update answer "
                                              f"(or Signal answer) with {ANSWER_EXAMPLES}")
        await page.screenshot(path=screenshots / "1-run.png", full_page=True)
        link = details.get_by_role("link", name=TARGET, exact=True)
        assert await link.get_attribute("href") == f"/namespaces/default/workflows/{urllib.parse.quote(test_wf, safe='')}"
        # The link opens the test's workflow (the rendered details open links in a new tab).
        async with page.context.expect_page() as opened:
            await link.click()
        child_page = await opened.value
        await child_page.wait_for_url(re.compile(re.escape(urllib.parse.quote(test_wf, safe=""))))
        await expect(child_page.get_by_text(test_wf).first).to_be_visible()
        await child_page.close()

        # The saved-list query (README) lists the test waiting for a person, and only while it waits.
        waiting_here = f"{WAITING_QUERY} AND WorkflowId = '{test_wf}'"
        assert await listed(client, waiting_here, [test_wf]) == [test_wf]
        await page.goto(f"{base}?query={urllib.parse.quote(WAITING_QUERY)}", wait_until="load")
        await expect(page.get_by_role("link", name=test_wf, exact=True)).to_be_visible()
        await page.screenshot(path=screenshots / "1-waiting-list.png", full_page=True)
        await open_metadata(page, f"{base}/{run_id}")

        # 2. Its relationships show the child running, and lead to it as well.
        await page.get_by_role("link", name="Relationships").or_(page.get_by_role("tab", name="Relationships")).first.click()
        link = page.get_by_role("link", name=test_wf, exact=True)
        await expect(link).to_be_visible()
        await page.screenshot(path=screenshots / "2-relationships.png", full_page=True)
        await link.click()
        await page.wait_for_url(re.compile(re.escape(urllib.parse.quote(test_wf, safe=""))))

        # 3. The test's details say its state, the last verdict and exactly what to type.
        await open_metadata(page, page.url)
        await expect(summary(page)).to_have_text(f"fix {TARGET}")
        details = current_details(page)
        await expect(details).to_contain_text("state: ESCALATED (attempt 1)")
        await expect(details).to_contain_text("last verdict: FAIL (the fixer proposed no edit")
        await expect(details).to_contain_text("to answer: Send Update")
        # Straight quotes (code spans): what is shown can be copied into the dialogs as it is.
        await expect(details).to_contain_text(f"Send Update answer (or Signal answer) with {ANSWER_EXAMPLES}")
        await page.screenshot(path=screenshots / "3-escalated-test.png", full_page=True)

        # 4. A typo through "Send an Update" is refused, saying what is allowed.
        dialog, data = await open_dialog(page, "Send an Update", "answer")
        await data.click()
        await page.keyboard.type('"skp"')
        await dialog.get_by_role("button", name="Submit").click()
        refusal = dialog.get_by_text(re.compile(r"not an answer: \"skp\""))
        await expect(refusal).to_be_visible()
        await expect(refusal).to_contain_text("Input should be 'retry', 'skip' or 'abort'")
        await dialog.screenshot(path=screenshots / "4-update-refused.png")
        await dialog.get_by_test_id("cancel-modal-button").click()
        await expect(dialog).to_be_hidden()
        assert (await wait_for_view(client, test_wf, lambda v: True, "a view")).state == FixState.ESCALATED

        # 5. "skip" through "Send a Signal".
        dialog, data = await open_dialog(page, "Send a Signal", "answer")
        await data.click()
        await page.keyboard.type('"skip"')
        await expect(data).to_have_text('"skip"')
        await dialog.screenshot(path=screenshots / "5-signal-skip.png")
        await dialog.get_by_role("button", name="Submit").click()
        await expect(dialog).to_be_hidden()

        # 6. The test ends SKIPPED, the run completes: seen in the UI and through the client.
        test_result: FixOneTestResult = await client.get_workflow_handle_for(FixOneTestWorkflow.run, test_wf).result()
        run_summary: RunSummary = await handle.result()
        assert test_result.state == FixState.SKIPPED and test_result.answer is not None
        assert test_result.answer.by == "a signal"
        assert run_summary.state == "completed" and run_summary.skipped == [TARGET]
        assert await listed(client, waiting_here, []) == []

        test_page = page.url

    # 7. The worker (and with it anything that could answer a query) is gone: the pages still say
    # how the test and the run ended, from what the workflows wrote before they completed.
    memo = await open_memo(page, test_page)
    await expect(page.get_by_text("Completed", exact=True).first).to_be_visible()
    await expect(memo).to_contain_text("state: **SKIPPED** (attempt 1)")
    await expect(memo).to_contain_text("skipped by a signal")
    await page.screenshot(path=screenshots / "6-skipped.png", full_page=True)
    memo = await open_memo(page, f"{base}/{run_id}")
    await expect(memo).to_contain_text("**finished: completed**")
    await expect(memo).to_contain_text("skipped 1")
    await page.screenshot(path=screenshots / "7-run-finished.png", full_page=True)
