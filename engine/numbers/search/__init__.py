"""The cheapest plan that meets a target: serving (TTFT and TPOT at p90 under a load) and
training (a deadline), searched over the catalogue's chips and set-ups."""
