"""The fields of a training job on a pod of dgx-1 servers, shared by the "Going further"
widgets (cluster_training, parallelism_picture): servers, tensor parallel, pipeline stages,
and the run's fixed choices."""

from __future__ import annotations

from engine.numbers import quantities
from engine.render.fields import Count

SYSTEM = "dgx-1"
# Llama 3 pre-trained on sequences of 8,192 tokens and sharded its optimiser state and
# gradients over the data-parallel GPUs (Llama 3 Herd of Models, sections 3.3.2 and 3.4.1).
SEQ_LEN = 8192
SHARDING = "zero1"

SERVERS = Count("servers", "dgx-1 servers", "256", unit="servers",
                quantity=quantities.POD_SERVERS)
TP = Count("tp", "Tensor parallel", "8", unit="GPUs", control_kind="select",
           options=(("1", "1 (none)"), ("2", "2"), ("4", "4"), ("8", "8 (one whole server)")),
           quantity=quantities.TENSOR_PARALLEL)
PP = Count("pp", "Pipeline stages", "4", unit="stages", quantity=quantities.PIPELINE_STAGES,
           hint="Layers split into this many stages.")
