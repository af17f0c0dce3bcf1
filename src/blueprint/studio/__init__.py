"""Blueprint Studio: a local web app for the people who review a set's rows, promote its
starter rows and label an LLM judge's verdicts. It writes only through the library's edit path
and the labels file ``judge-report`` reads."""
