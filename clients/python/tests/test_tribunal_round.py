"""A full tribunal round against a running Agora: AGORA_URL (the gateway) and AGORA_OPERATOR_KEY_FILE.
Skipped when AGORA_URL is not set."""
import os
import time
import unittest
import uuid

from agora_client import AgoraError, AgoraHttpClient, generate_key_pair, read_key_file

URL = os.environ.get("AGORA_URL")
CONSTITUTIONS = ["risk", "premise", "evidence", "execution"]


def wait_for(check, what, timeout=40.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("gave up waiting for " + what)
        time.sleep(0.2)


@unittest.skipUnless(URL, "AGORA_URL is not set: no running Agora to play a round against")
class TestTribunalRound(unittest.TestCase):
    def test_submit_reviewers_approve_approved(self):
        agora = AgoraHttpClient(URL)
        operator = read_key_file(os.environ["AGORA_OPERATOR_KEY_FILE"])
        run = uuid.uuid4().hex[:8]
        executive = generate_key_pair("py-exec-" + run)
        reviewers = {c: generate_key_pair("py-%s-%s" % (c, run)) for c in CONSTITUTIONS}

        agora.command("RegisterAgent", {"agentId": executive.agent_id, "publicKey": executive.public_key, "displayName": "Python executive", "roles": ["executive"], "trustScore": 500}, operator)
        for constitution, key in reviewers.items():
            registered = agora.command("RegisterAgent", {"agentId": key.agent_id, "publicKey": key.public_key, "displayName": "Python " + constitution, "roles": ["reviewer"], "constitutions": [constitution], "trustScore": 500}, operator)
        # Read your writes: listed at once when asked with the last registration's position.
        listed = {a["agentId"] for a in agora.query_all("registry", "agents", "agents", role="reviewer", min_position=registered["position"])}
        self.assertLessEqual({k.agent_id for k in reviewers.values()}, listed)
        with self.assertRaises(AgoraError) as behind:
            agora.query("registry", "agents", min_position="999999999999")
        self.assertEqual((behind.exception.status, behind.exception.code), (503, "read_model_behind"))
        self.assertEqual(behind.exception.details["minPosition"], "999999999999")

        proposal_id = "py-" + run
        result = agora.command("SubmitProposal", {"proposalId": proposal_id, "title": "Tutorial tooltips", "body": "Add tooltips to the first three screens — für alle Nutzer", "problem": "Users drop off at step 2"}, executive)
        self.assertIn("ProposalSubmitted", result["events"])

        def open_round():
            p = agora.query("proposal", "proposals/" + proposal_id)
            if p["status"] == "escalated":
                raise AssertionError("escalated: %s" % p.get("escalations"))
            return next((r for r in p["rounds"] if r["status"] == "open"), None)

        round_ = wait_for(open_round, "the review round to open")
        # An objection without its parts is refused, as the schema says.
        vague = {"proposalId": proposal_id, "round": round_["round"], "constitution": "risk", "verdict": "object", "reasoning": "feels wrong"}
        with self.assertRaises(AgoraError) as refused:
            agora.command("SubmitReview", vague, reviewers["risk"])
        self.assertEqual(refused.exception.code, "invalid_command")

        for constitution, key in reviewers.items():
            agora.command("SubmitReview", {"proposalId": proposal_id, "round": round_["round"], "constitution": constitution, "verdict": "approve", "reasoning": "fine on " + constitution}, key)
        wait_for(lambda: agora.query("proposal", "proposals/" + proposal_id)["status"] == "approved", "the proposal to be approved")

        # A bad signature is refused.
        with self.assertRaises(AgoraError) as bad:
            agora.command("SubmitProposal", {"proposalId": proposal_id + "-x", "title": "T", "body": "B", "problem": "P"}, reviewers["risk"], actor=executive.agent_id)
        self.assertEqual(bad.exception.code, "bad_signature")


if __name__ == "__main__":
    unittest.main()
