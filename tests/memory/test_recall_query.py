"""The words a prompt asks PLUR's keyword recall for."""

from tmg.memory.query import recall_query


def test_function_words_go_and_the_rest_stays_in_order_as_typed():
    assert recall_query("How do I roll back a failed deploy of the release branch?") == \
        "roll back failed deploy release branch?"
    assert recall_query("fix src/app.py line 3, it is broken!") == "fix src/app.py line 3, broken!"


def test_other_languages_function_words_go_too():
    assert recall_query("Wie kann ich die Datei in Python lesen?") == "Wie kann Datei Python lesen?"


def test_the_words_plur_reads_as_asking_about_the_past_stay():
    # PLUR keeps superseded notes in the running only for a prompt with one of them.
    assert recall_query("what was the old way to do it before?") == "was old way to before?"


def test_a_prompt_of_function_words_only_is_sent_as_typed():
    assert recall_query("the a of") == "the a of"
    assert recall_query("and , ?") == "and , ?"
