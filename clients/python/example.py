"""An agent registered by the operator submits a proposal, over HTTP.

    python3 clients/python/example.py      # against `npm start` (gateway on 8080, operator key in ./data)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agora_client import AgoraHttpClient, generate_key_pair, read_key_file  # noqa: E402

agora = AgoraHttpClient(os.environ.get("AGORA_URL", "http://127.0.0.1:8080"))
operator = read_key_file(os.environ.get("AGORA_OPERATOR_KEY_FILE", "data/operator.key.json"))
alice = generate_key_pair("alice")

# The operator registers alice; alice submits a proposal. Both are signed commands.
agora.command("RegisterAgent", {"agentId": "alice", "publicKey": alice.public_key, "displayName": "Alice", "roles": ["executive"]}, operator)
result = agora.command("SubmitProposal", {"proposalId": "p1", "title": "Onboarding", "body": "Add tutorial tooltips", "problem": "Users drop off"}, alice)
print("events:", ", ".join(result["events"]))
# Read your writes: the query answers once it has seen the proposal (the command's log position).
print("proposal p1 is", agora.query("proposal", "proposals/p1", min_position=result["position"])["status"])
