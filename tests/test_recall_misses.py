"""benchmarks.recall_misses: each gold memory is placed at the first selector step it fails."""

from __future__ import annotations

from benchmarks.recall_misses import placements
from memdir.scan import scan


def _write(folder, rel, name, description, body):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / rel).write_text(f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{body}\n")


def test_a_gold_memory_is_placed_where_the_selector_left_it(tmp_path):
    folder = tmp_path / "memory"
    _write(folder, "project_kafka.md", "Kafka over RabbitMQ", "Events go through Kafka, chosen over RabbitMQ",
           "RabbitMQ was dropped for Kafka's replay.")
    _write(folder, "project_queue.md", "RabbitMQ queue limits", "RabbitMQ queues cap at 10k messages",
           "RabbitMQ queues are capped; events wait in Kafka.")
    _write(folder, "user_lunch.md", "Lunch", "The user eats lunch at noon", "Lunch at noon, every day.")
    headers = scan(folder).headers
    gold = {"project_kafka.md", "project_queue.md", "user_lunch.md", "gone.md"}
    both = placements("should new events go to RabbitMQ or Kafka?", headers, gold, limit=5)
    # lunch shares no word: no score, or the faint one feedback terms give everything, under the floor
    assert both.pop("user_lunch.md") in ("no match", "under the floor")
    assert both == {"project_kafka.md": "picked", "project_queue.md": "picked", "gone.md": "not a candidate"}
    one = placements("should new events go to RabbitMQ or Kafka?", headers, gold, limit=1)
    assert sorted(v for k, v in one.items() if k.startswith("project_")) == ["outranked (would clear the bar)",
                                                                            "picked"]
